package io.datum.cdc.event;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import java.util.Objects;

/**
 * An inserted row (pgoutput Insert message).
 *
 * @param offset the event's offset, not null
 * @param transaction the transaction, not null
 * @param lsn the change's WAL position ({@link ChangeEvent#lsn()}), not null
 * @param table the table, not null
 * @param after the new row, every column, not null
 */
public record InsertEvent(
    CdcOffset offset, TransactionInfo transaction, PgLsn lsn, TableId table, Row after)
    implements RowChange {

  /**
   * @throws NullPointerException if a field is null
   */
  public InsertEvent {
    Objects.requireNonNull(offset, "offset");
    Objects.requireNonNull(transaction, "transaction");
    Objects.requireNonNull(lsn, "lsn");
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(after, "after");
  }

  /**
   * An event whose {@link #lsn()} is its transaction's {@link TransactionInfo#commitLsn()}: for
   * events built outside a source (a handler's tests, a replay of stored events), which have no WAL
   * position of their own. A source always gives each change its own LSN.
   *
   * @param offset the event's offset, not null
   * @param transaction the transaction, not null
   * @param table the table, not null
   * @param after the new row, not null
   * @throws NullPointerException if a field is null
   */
  public InsertEvent(CdcOffset offset, TransactionInfo transaction, TableId table, Row after) {
    this(offset, transaction, Events.commitLsn(transaction), table, after);
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
