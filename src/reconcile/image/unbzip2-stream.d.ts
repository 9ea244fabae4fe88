/** unbzip2-stream ships no types: it exports one function making a through stream (readable and writable). */
declare module 'unbzip2-stream' {
  import type { Duplex } from 'node:stream';

  export default function unbzip2(): Duplex;
}
