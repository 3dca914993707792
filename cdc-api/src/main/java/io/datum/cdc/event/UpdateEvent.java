package io.datum.cdc.event;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import java.util.Objects;

/**
 * An updated row (pgoutput Update message).
 *
 * @param offset the event's offset, not null
 * @param transaction the transaction, not null
 * @param lsn the change's WAL position ({@link ChangeEvent#lsn()}), not null
 * @param table the table, not null
 * @param before the old row as PostgreSQL sent it: every column with REPLICA IDENTITY FULL, the key
 *     columns when the key changed (or a key column is TOASTed), otherwise null
 * @param after the new row; columns whose TOASTed value did not change are marked {@linkplain
 *     Row#isUnchangedToast unchanged}, unless filled from a full {@code before} image
 */
public record UpdateEvent(
    CdcOffset offset, TransactionInfo transaction, PgLsn lsn, TableId table, Row before, Row after)
    implements RowChange {

  /**
   * @throws NullPointerException if a field other than {@code before} is null
   */
  public UpdateEvent {
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
   * @param before the old row, or null
   * @param after the new row, not null
   * @throws NullPointerException if a field other than {@code before} is null
   */
  public UpdateEvent(
      CdcOffset offset, TransactionInfo transaction, TableId table, Row before, Row after) {
    this(offset, transaction, Events.commitLsn(transaction), table, before, after);
  }

  @Override
  public ChangeKind kind() {
    return ChangeKind.UPDATE;
  }

  @Override
  public Row key() {
    return after.keyColumns();
  }
}
