/**
 * Giving disk space back on the SQLite backend. SQLite never shrinks its files by itself: pages that
 * compaction or a deletion frees go to a freelist that only later writes reuse, and the WAL keeps the
 * size of the largest transaction it ever held. Writes to a 3.8 MB object grew a database from 17 MB
 * to 884 MB that way (issue 47, H2). So the database is in incremental auto-vacuum mode (a file made
 * before is switched once, with a VACUUM, at open), the WAL is truncated to a bounded size whenever a
 * checkpoint resets it, and free pages are returned in bounded steps, each a short transaction, so
 * returning hundreds of megabytes never holds the event loop for long.
 */
import type Database from 'better-sqlite3';

/** What the WAL is cut back to when a checkpoint resets it (SQLite's journal_size_limit). */
const walSizeLimitBytes = 16 * 1024 * 1024;
/** Pages returned per step: 4 MiB of 4 KiB pages, a few milliseconds of moving pages. */
const pagesPerStep = 1024;
/** A freelist smaller than this is left for the next writes to reuse. */
const pagesWorthReturning = 256;
const incrementalAutoVacuum = 2;

/**
 * Before journal_mode: an empty file takes incremental auto-vacuum only while it has no table, and
 * setting the WAL mode already writes its first page.
 */
export function prepareSpaceReturn(db: Database.Database): void {
  db.pragma(`journal_size_limit = ${walSizeLimitBytes}`);
  if (db.pragma('auto_vacuum', { simple: true }) === incrementalAutoVacuum) return;
  db.pragma('auto_vacuum = INCREMENTAL');
  const tables = db.prepare<[], number>("SELECT count(*) FROM sqlite_master WHERE type = 'table'").pluck().get()!;
  // A database made before holds its tables already: one VACUUM rewrites it in the new mode.
  if (tables > 0) db.exec('VACUUM');
}

/**
 * Returns at most one step's worth of free pages to the file system; true when more remain. Once the
 * freelist is short, checkpoints the WAL and truncates it, so the main file's shrinking reaches the disk.
 */
export function returnFreePagesStep(db: Database.Database): boolean {
  const free = db.pragma('freelist_count', { simple: true }) as number;
  if (free < pagesWorthReturning) {
    db.pragma('wal_checkpoint(TRUNCATE)');
    return false;
  }
  db.pragma(`incremental_vacuum(${pagesPerStep})`);
  return true;
}
