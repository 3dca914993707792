package io.datum.cdc.event;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.TableId;
import java.util.List;
import java.util.Objects;

/**
 * One TRUNCATE statement (pgoutput Truncate message), one event for all the tables it truncated.
 *
 * @param offset the event's offset, not null
 * @param transaction the transaction, not null
 * @param tables the truncated tables, in the order PostgreSQL sent them; copied, not empty
 * @param cascade true if TRUNCATE ... CASCADE (option bit 1)
 * @param restartIdentity true if TRUNCATE ... RESTART IDENTITY (option bit 2)
 */
public record TruncateEvent(
    CdcOffset offset,
    TransactionInfo transaction,
    List<TableId> tables,
    boolean cascade,
    boolean restartIdentity)
    implements ChangeEvent {

  /**
   * @throws NullPointerException if a field is null
   */
  public TruncateEvent {
    Objects.requireNonNull(offset, "offset");
    Objects.requireNonNull(transaction, "transaction");
    tables = List.copyOf(tables);
  }

  @Override
  public ChangeKind kind() {
    return ChangeKind.TRUNCATE;
  }
}
