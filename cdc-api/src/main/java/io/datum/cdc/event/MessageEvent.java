package io.datum.cdc.event;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import java.util.Objects;

/**
 * A logical decoding message written with {@code pg_logical_emit_message} (pgoutput Message, sent
 * only with the {@code messages} option, PostgreSQL 14 and later).
 *
 * <p>A non-transactional message is delivered as a transaction of its own whose {@code commitLsn}
 * and {@code txEndLsn} are both the message's LSN, the end of its WAL record (PostgreSQL source,
 * src/backend/replication/logical/decode.c, {@code logicalmsg_decode}: the walsender skips the
 * message on a restart once the confirmed position is past the record's start).
 *
 * @param offset the event's offset, not null
 * @param transaction the transaction, not null
 * @param lsn the change's WAL position ({@link ChangeEvent#lsn()}), not null
 * @param prefix the message prefix, not null
 * @param content the message content; the array is not copied, do not modify it
 * @param transactional true if written as part of a transaction
 */
public record MessageEvent(
    CdcOffset offset,
    TransactionInfo transaction,
    PgLsn lsn,
    String prefix,
    byte[] content,
    boolean transactional)
    implements ChangeEvent {

  /**
   * @throws NullPointerException if a field is null
   */
  public MessageEvent {
    Objects.requireNonNull(offset, "offset");
    Objects.requireNonNull(transaction, "transaction");
    Objects.requireNonNull(lsn, "lsn");
    Objects.requireNonNull(prefix, "prefix");
    Objects.requireNonNull(content, "content");
  }

  /**
   * An event whose {@link #lsn()} is its transaction's {@link TransactionInfo#commitLsn()}: for
   * events built outside a source (a handler's tests, a replay of stored events), which have no WAL
   * position of their own. A source always gives each change its own LSN.
   *
   * @param offset the event's offset, not null
   * @param transaction the transaction, not null
   * @param prefix the message prefix, not null
   * @param content the message content, not copied
   * @param transactional true if written as part of a transaction
   * @throws NullPointerException if a field is null
   */
  public MessageEvent(
      CdcOffset offset,
      TransactionInfo transaction,
      String prefix,
      byte[] content,
      boolean transactional) {
    this(offset, transaction, Events.commitLsn(transaction), prefix, content, transactional);
  }

  @Override
  public ChangeKind kind() {
    return ChangeKind.MESSAGE;
  }
}
