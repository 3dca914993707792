package io.datum.cdc.event;

import io.datum.cdc.TableId;

/** One row of one table: an insert, update or delete, or a row read by a snapshot. */
public sealed interface RowChange extends ChangeEvent
    permits InsertEvent, UpdateEvent, DeleteEvent, ReadEvent {

  /** Returns the table the row belongs to, as it was named when the change was written. */
  TableId table();

  /**
   * Returns the row's replica-identity columns: from the new row for an insert or update, from the
   * old row for a delete. Null when the table has no replica identity columns (REPLICA IDENTITY
   * NOTHING, or DEFAULT without a primary key).
   *
   * @return the key columns and their values, or null
   */
  Row key();
}
