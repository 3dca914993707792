package io.datum.cdc.core.pgoutput;

import io.datum.cdc.PgLsn;
import io.datum.cdc.core.relation.RelationInfo;
import io.datum.cdc.event.Row;
import java.util.List;

/**
 * Receives one decoded change message from {@link PgOutputDecoder#decodeChange}: Insert, Update,
 * Delete, Truncate or a transactional Message (PostgreSQL docs, 55.9 Logical Replication Message
 * Formats; writer side: src/backend/replication/logical/proto.c, {@code logicalrep_write_*}). The
 * decoder calls exactly one method per {@code decodeChange}, and only after the whole message
 * decoded; exceptions a listener throws propagate out of {@code decodeChange} unchanged.
 */
public interface ChangeListener {

  /**
   * Insert ({@code 'I'}).
   *
   * @param relation the table, from the decoder's cache
   * @param newRow every column of the new row
   */
  void insert(RelationInfo relation, Row newRow);

  /**
   * Update ({@code 'U'}).
   *
   * @param relation the table, from the decoder's cache
   * @param oldRow the old row: all columns when {@code oldRowIsFull} ({@code 'O'}, REPLICA IDENTITY
   *     FULL), only {@link RelationInfo#keyColumns()} otherwise ({@code 'K'}); null when PostgreSQL
   *     sent no old tuple (the key did not change)
   * @param oldRowIsFull true for an {@code 'O'} tuple, false for {@code 'K'} or none
   * @param newRow every column of the new row; unchanged TOAST columns are filled from the old row
   *     where it carries their value
   */
  void update(RelationInfo relation, Row oldRow, boolean oldRowIsFull, Row newRow);

  /**
   * Delete ({@code 'D'}).
   *
   * @param relation the table, from the decoder's cache
   * @param oldRow all columns when {@code oldRowIsFull}, only the key columns otherwise; not null
   * @param oldRowIsFull true for an {@code 'O'} tuple, false for {@code 'K'}
   */
  void delete(RelationInfo relation, Row oldRow, boolean oldRowIsFull);

  /**
   * Truncate ({@code 'T'}): one message for a whole TRUNCATE statement.
   *
   * @param relations the truncated tables, in message order; unmodifiable
   * @param cascade option bit 1 ({@code CASCADE})
   * @param restartIdentity option bit 2 ({@code RESTART IDENTITY})
   */
  void truncate(List<RelationInfo> relations, boolean cascade, boolean restartIdentity);

  /**
   * A transactional Message ({@code 'M'} with flag bit 1): a logical decoding message written by
   * {@code pg_logical_emit_message(true, ...)} inside the transaction (sent only with the {@code
   * messages} option).
   *
   * @param lsn the LSN of the message
   * @param prefix the message prefix
   * @param content the message content, a fresh array owned by the listener
   */
  void message(PgLsn lsn, String prefix, byte[] content);
}
