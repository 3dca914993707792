package io.datum.cdc.event;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.TableId;
import java.util.Objects;

/**
 * A deleted row (pgoutput Delete message).
 *
 * @param offset the event's offset, not null
 * @param transaction the transaction, not null
 * @param table the table, not null
 * @param before the old row: every column with REPLICA IDENTITY FULL, the key columns otherwise;
 *     null if the table has no replica identity (PostgreSQL then sends no Delete at all, so this is
 *     null only for future protocol variants)
 */
public record DeleteEvent(CdcOffset offset, TransactionInfo transaction, TableId table, Row before)
    implements RowChange {

  /**
   * @throws NullPointerException if a field other than {@code before} is null
   */
  public DeleteEvent {
    Objects.requireNonNull(offset, "offset");
    Objects.requireNonNull(transaction, "transaction");
    Objects.requireNonNull(table, "table");
  }

  @Override
  public ChangeKind kind() {
    return ChangeKind.DELETE;
  }

  @Override
  public Row key() {
    return before == null ? null : before.keyColumns();
  }
}
