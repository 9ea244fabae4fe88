/**
 * The benchmarks' reading of a watch stream: each MODIFIED event's `benchseq` label (the update
 * that caused it), with the arrival time of the chunk it came in, shared by run.ts and deployed.ts.
 */

/** A chunk handler for one watch: calls `onEvent` per event line with its update's sequence number (undefined for any other event). */
export function benchSequenceReader(onEvent: (seq: number | undefined, arrivedMs: number) => void): (chunk: string) => void {
  let buffered = '';
  return (chunk) => {
    // One timestamp per chunk, taken before any parsing, is the arrival time of every event in it.
    const arrived = performance.now();
    buffered += chunk;
    for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      // A regex over the line is far cheaper than JSON.parse, and client CPU competes with the server's on 2 cores.
      const seq = line.startsWith('{"type":"MODIFIED"') ? /"benchseq":"(\d+)"/.exec(line)?.[1] : undefined;
      onEvent(seq === undefined ? undefined : Number(seq), arrived);
    }
  };
}
