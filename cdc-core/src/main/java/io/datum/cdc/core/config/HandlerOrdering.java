package io.datum.cdc.core.config;

/**
 * Which events a source with more than one handler thread ({@code handler-threads}) hands to its
 * handler one at a time and in stream order: the events of one <em>ordering unit</em> are handled
 * in stream order, one after the other, on one thread at a time; events of different units are
 * handled in parallel. With one handler thread every event is handled in stream order and this
 * setting changes nothing.
 *
 * <p>In every ordering, an event that must follow every earlier event and precede every later one
 * is handled alone, after every thread finished what it was handed before it and before any thread
 * takes what comes after it: a {@code TRUNCATE} (also a snapshot's reset of a table without a key)
 * and a logical decoding message ({@code pg_logical_emit_message}). See docs/library.md, "Parallel
 * handlers".
 */
public enum HandlerOrdering {
  /**
   * The unit is a row of a table: the table and the values of its key, which is the primary key
   * where the catalog reports one (also under {@code REPLICA IDENTITY FULL}), else the replica
   * identity index's columns. An update that changes the key is handled after every earlier event
   * of the old key and of the new key and before every later one of either. A table without a key
   * (no primary key, replica identity {@code FULL} or {@code NOTHING}) is one unit. A snapshot's
   * read row belongs to its row's unit, so it and every later change of that row stay in order. The
   * default with more than one thread.
   */
  KEY,
  /** The unit is a table: the changes of one table are handled in stream order. */
  TABLE,
  /**
   * The unit is a transaction (for a snapshot's read rows, the chunk they were read in): its events
   * are handled in order on one thread, so a handler can process and acknowledge a transaction as a
   * whole ({@code acknowledgeTransaction} at its last event). Transactions are handled in parallel
   * in no particular order, even when they change the same row.
   */
  TRANSACTION,
  /**
   * No unit: row changes and read rows are handed to whichever thread has the fewest waiting, and
   * may be handled in any order (only {@code TRUNCATE} and messages keep their place). For handlers
   * whose effect does not depend on order (counting, idempotent writes that carry a version).
   */
  NONE
}
