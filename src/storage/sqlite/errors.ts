// SQLite's failures as StorageErrors whose messages say what happened and what to do.

import fs from "node:fs";
import nodePath from "node:path";
import { LeaseLostError, StorageError } from "../../errors.js";

/** The folder a database file would live in, when it does not exist (null when it does, or for ":memory:"). */
export function missingFolder(path: string): string | null {
  if (path === ":memory:" || path === "") return null;
  const folder = nodePath.dirname(nodePath.resolve(path));
  return fs.existsSync(folder) ? null : folder;
}

/** The error for a database path whose folder does not exist: SQLite creates files, never folders. */
export function noFolderError(path: string, folder: string, cause?: unknown): StorageError {
  return new StorageError(
    "STORAGE_NO_FOLDER",
    `Cannot open "${path}": its folder ${folder} does not exist (SQLite creates the file, not the folders above it). Create the folder (mkdir -p "${folder}"), or fix the path.`,
    { path, folder },
    cause === undefined ? undefined : { cause },
  );
}

/** A failure to open (or first read) a database file. */
export function describeOpenError(path: string, err: unknown): Error {
  if (err instanceof StorageError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: string }).code ?? "";
  const folder = missingFolder(path);
  if (folder) return noFolderError(path, folder, err);
  if (code === "SQLITE_NOTADB" || /not a database/.test(message)) {
    return new StorageError(
      "STORAGE_NOT_A_DATABASE",
      `"${path}" is not a SQLite database (SQLite said: ${message}). Point Waymark at another file, or move this one away; Waymark did not change it.`,
      { path },
      { cause: err },
    );
  }
  if (code === "SQLITE_CORRUPT" || /malformed/.test(message)) {
    return new StorageError(
      "STORAGE_CORRUPT",
      `"${path}" is corrupted (SQLite said: ${message}). Stop every process using it, then restore it from a backup, or save what is readable with "sqlite3 ${path} .recover > recovered.sql".`,
      { path },
      { cause: err },
    );
  }
  if (code === "SQLITE_CANTOPEN" || code === "SQLITE_READONLY" || /readonly|unable to open/.test(message)) {
    return new StorageError(
      "STORAGE_CANNOT_OPEN",
      `Cannot open "${path}" for writing (SQLite said: ${message}). Check that the folder exists and that this user may write the file and its folder (SQLite adds -wal and -shm files beside it).`,
      { path },
      { cause: err },
    );
  }
  if (code === "SQLITE_BUSY" || /locked|busy/.test(message)) {
    return new StorageError(
      "STORAGE_BUSY",
      `"${path}" is locked by another process (SQLite said: ${message}). Wait for it to finish or stop it, then try again.`,
      { path },
      { cause: err },
    );
  }
  return new StorageError(
    "STORAGE_OPEN_FAILED",
    `Cannot open "${path}": ${message}`,
    { path },
    { cause: err },
  );
}

/** Any other SQLite failure on `where` as a StorageError that says what happened and what to do. */
export function describeStorageError(where: string, err: unknown): unknown {
  if (err instanceof StorageError || err instanceof LeaseLostError) return err;
  const code = (err as { code?: string }).code ?? "";
  const message = err instanceof Error ? err.message : String(err);
  if (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") {
    return describeOpenError(where, err);
  }
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
    return new StorageError(
      "STORAGE_BUSY",
      `"${where}" stayed locked by another process past the busy timeout; nothing was written. Waymark retries; if this persists, find the process holding the lock.`,
      { path: where },
      { cause: err },
    );
  }
  if (code === "SQLITE_FULL" || /full/.test(message)) {
    return new StorageError(
      "STORAGE_FULL",
      `The disk holding "${where}" is full; nothing was written. Free space; Waymark retries and the runs resume.`,
      { path: where },
      { cause: err },
    );
  }
  if (code.startsWith("SQLITE_READONLY")) {
    return new StorageError(
      "STORAGE_READONLY",
      `"${where}" is read-only; nothing was written. Give this user write access to the file and its folder.`,
      { path: where },
      { cause: err },
    );
  }
  if (code.startsWith("SQLITE_IOERR")) {
    return new StorageError(
      "STORAGE_IO",
      `Writing "${where}" failed (${message}); nothing was written. Check the disk (space, quota, file size limit).`,
      { path: where },
      { cause: err },
    );
  }
  return new StorageError(
    "STORAGE_WRITE_FAILED",
    `Writing "${where}" failed: ${message}`,
    { path: where },
    { cause: err },
  );
}
