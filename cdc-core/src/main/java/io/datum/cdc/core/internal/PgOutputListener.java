package io.datum.cdc.core.internal;

import io.datum.cdc.PgLsn;
import io.datum.cdc.event.Row;
import java.time.Instant;
import java.util.List;

/**
 * Receives the messages {@link PgOutputDecoder} decodes, one call per pgoutput message, protocol
 * version 1 (PostgreSQL docs, 55.9 Logical Replication Message Formats; writer side:
 * src/backend/replication/logical/proto.c, {@code logicalrep_write_*}).
 *
 * <p>The decoder calls a method only after the whole message decoded without error, so a
 * listener never sees half a message. Exceptions a listener throws propagate out of {@link
 * PgOutputDecoder#decode} unchanged. Timestamps are converted from PostgreSQL's microseconds since
 * 2000-01-01T00:00:00Z.
 */
public interface PgOutputListener {

  /**
   * Begin ({@code 'B'}): a transaction starts.
   *
   * @param finalLsn the LSN of the transaction's commit record (equals Commit's commit LSN)
   * @param commitTime the commit timestamp
   * @param xid the transaction id, an unsigned 32-bit value in {@code [0, 2^32)}
   */
  void begin(PgLsn finalLsn, Instant commitTime, long xid);

  /**
   * Commit ({@code 'C'}): the transaction begun by the last Begin committed.
   *
   * @param flags the flags byte, unsigned (currently always 0)
   * @param commitLsn the LSN of the commit record
   * @param endLsn the end LSN of the transaction (the position to report as flushed once done)
   * @param commitTime the commit timestamp
   */
  void commit(int flags, PgLsn commitLsn, PgLsn endLsn, Instant commitTime);

  /**
   * Origin ({@code 'O'}): the transaction was replayed from another node.
   *
   * @param originLsn the commit LSN on the origin server
   * @param name the replication origin's name
   */
  void origin(PgLsn originLsn, String name);

  /**
   * Relation ({@code 'R'}): a table's description, sent before its first row change and again
   * after DDL. Called after the decoder replaced its cache entry for {@code relation.oid()}.
   *
   * @param relation the new description, not null
   */
  void relation(RelationInfo relation);

  /**
   * Type ({@code 'Y'}): a non-builtin type used by a published column (a domain is sent under its
   * base type's namespace and name, with the domain's own oid).
   *
   * @param oid the type's oid as used in Relation messages
   * @param namespace the namespace, {@code pg_catalog} when the message had an empty one
   * @param name the type name
   */
  void type(int oid, String namespace, String name);

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
   * @param oldRow the old row: all columns when {@code oldRowIsFull} ({@code 'O'}, REPLICA
   *     IDENTITY FULL), only {@link RelationInfo#keyColumns()} otherwise ({@code 'K'}); null when
   *     PostgreSQL sent no old tuple (the key did not change)
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
   * Message ({@code 'M'}): a logical decoding message written by {@code
   * pg_logical_emit_message} (sent only with the {@code messages} option).
   *
   * @param transactional flag bit 1: part of the enclosing transaction
   * @param lsn the LSN of the message
   * @param prefix the message prefix
   * @param content the message content, a fresh array owned by the listener
   */
  void message(boolean transactional, PgLsn lsn, String prefix, byte[] content);
}
