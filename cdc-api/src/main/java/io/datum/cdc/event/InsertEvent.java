package io.datum.cdc.event;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.TableId;
import java.util.Objects;

/**
 * An inserted row (pgoutput Insert message).
 *
 * @param offset the event's offset, not null
 * @param transaction the transaction, not null
 * @param table the table, not null
 * @param after the new row, every column, not null
 */
public record InsertEvent(CdcOffset offset, TransactionInfo transaction, TableId table, Row after)
    implements RowChange {

  /**
   * @throws NullPointerException if a field is null
   */
  public InsertEvent {
    Objects.requireNonNull(offset, "offset");
    Objects.requireNonNull(transaction, "transaction");
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(after, "after");
  }

  @Override
  public ChangeKind kind() {
    return ChangeKind.INSERT;
  }

  @Override
  public Row key() {
    return after.keyColumns();
  }
}
