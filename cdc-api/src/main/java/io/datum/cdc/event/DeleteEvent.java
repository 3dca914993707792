package io.datum.cdc.event;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import java.util.Objects;

/**
 * A deleted row (pgoutput Delete message).
 *
 * @param offset the event's offset, not null
 * @param transaction the transaction, not null
 * @param lsn the change's WAL position ({@link ChangeEvent#lsn()}), not null
 * @param table the table, not null
 * @param before the old row: every column with REPLICA IDENTITY FULL, the key columns otherwise;
 *     null if the table has no replica identity (PostgreSQL then sends no Delete at all, so this is
 *     null only for future protocol variants)
 */
public record DeleteEvent(
    CdcOffset offset, TransactionInfo transaction, PgLsn lsn, TableId table, Row before)
    implements RowChange {

  /**
   * @throws NullPointerException if a field other than {@code before} is null
   */
  public DeleteEvent {
    Objects.requireNonNull(offset, "offset");
    Objects.requireNonNull(transaction, "transaction");
    Objects.requireNonNull(lsn, "lsn");
    Objects.requireNonNull(table, "table");
  }

  /**
   * An event whose {@link #lsn()} is its transaction's {@link TransactionInfo#commitLsn()}: for
   * events built outside a source (a handler's tests, a replay of stored events), which have no WAL
   * position of their own. A source always gives each change its own LSN.
   *
   * @param offset the event's offset, not null
   * @param transaction the transaction, not null
   * @param table the table, not null
   * @param before the old row, or null
   * @throws NullPointerException if a field other than {@code before} is null
   */
  public DeleteEvent(CdcOffset offset, TransactionInfo transaction, TableId table, Row before) {
    this(offset, transaction, Events.commitLsn(transaction), table, before);
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
