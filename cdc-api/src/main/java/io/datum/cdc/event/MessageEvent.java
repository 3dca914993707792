package io.datum.cdc.event;

import io.datum.cdc.CdcOffset;
import java.util.Objects;

/**
 * A logical decoding message written with {@code pg_logical_emit_message} (pgoutput Message, sent
 * only with the {@code messages} option, PostgreSQL 14 and later).
 *
 * <p>A non-transactional message is delivered as a transaction of its own whose {@code commitLsn}
 * is the message's LSN and whose {@code txEndLsn} is one byte after it (the walsender skips a
 * non-transactional message whose LSN is before the confirmed position; PostgreSQL source,
 * src/backend/replication/logical/decode.c, {@code logicalmsg_decode}).
 *
 * @param offset the event's offset, not null
 * @param transaction the transaction, not null
 * @param prefix the message prefix, not null
 * @param content the message content; the array is not copied, do not modify it
 * @param transactional true if written as part of a transaction
 */
public record MessageEvent(
    CdcOffset offset,
    TransactionInfo transaction,
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
    Objects.requireNonNull(prefix, "prefix");
    Objects.requireNonNull(content, "content");
  }

  @Override
  public ChangeKind kind() {
    return ChangeKind.MESSAGE;
  }
}
