package io.datum.cdc.core.pgoutput;

import io.datum.cdc.PgLsn;
import io.datum.cdc.core.relation.RelationInfo;
import java.nio.ByteBuffer;
import java.time.Instant;

/**
 * Receives the messages {@link PgOutputDecoder#decode} decodes, one call per pgoutput message,
 * protocol versions 1 to 4 (PostgreSQL docs, 55.9 Logical Replication Message Formats; writer side:
 * src/backend/replication/logical/proto.c, {@code logicalrep_write_*}): the transaction framing,
 * the catalog messages, and each change message passed on undecoded ({@link #change}), to be
 * decoded later by {@link PgOutputDecoder#decodeChange} into a {@link ChangeListener}.
 *
 * <p>The decoder calls a method only after the whole message (for a change, its header) decoded
 * without error, so a listener never sees half a message. Exceptions a listener throws propagate
 * out of {@link PgOutputDecoder#decode} unchanged. Timestamps are converted from PostgreSQL's
 * microseconds since 2000-01-01T00:00:00Z. Transaction ids are unsigned 32-bit values in {@code [0,
 * 2^32)}. Inside a Stream Start/Stop block, the (sub)transaction of each change is {@link
 * PgOutputDecoder#changeXid()}.
 */
public interface TransactionListener {

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
   * Relation ({@code 'R'}): a table's description, sent before its first row change and again after
   * DDL. Called after the decoder replaced its cache entry for {@code relation.oid()}.
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
   * Stream Start ({@code 'S'}, protocol 2+): changes of an in-progress transaction follow, until
   * Stream Stop.
   *
   * @param xid the top-level transaction
   * @param firstSegment true for the transaction's first block
   */
  void streamStart(long xid, boolean firstSegment);

  /** Stream Stop ({@code 'E'}, protocol 2+): the block begun by the last Stream Start ends. */
  void streamStop();

  /**
   * Stream Commit ({@code 'c'}, protocol 2+): a streamed transaction committed.
   *
   * @param xid the top-level transaction
   * @param flags the flags byte, unsigned (currently 0)
   * @param commitLsn the LSN of the commit record
   * @param endLsn the end LSN of the transaction
   * @param commitTime the commit timestamp
   */
  void streamCommit(long xid, int flags, PgLsn commitLsn, PgLsn endLsn, Instant commitTime);

  /**
   * Stream Abort ({@code 'A'}, protocol 2+): a streamed transaction, or one of its subtransactions,
   * aborted.
   *
   * @param xid the top-level transaction
   * @param subxid the aborted transaction: {@code xid} itself, or a subtransaction of it (only its
   *     changes, and those of its own subtransactions, which get their own Stream Abort, are void)
   * @param abortLsn the abort record's LSN, or null (sent only with protocol 4 and {@code streaming
   *     = parallel})
   * @param abortTime the abort time, or null likewise
   */
  void streamAbort(long xid, long subxid, PgLsn abortLsn, Instant abortTime);

  /**
   * Begin Prepare ({@code 'b'}, protocol 3+): a transaction being prepared for two-phase commit
   * starts; its changes and a Prepare follow.
   *
   * @param prepareLsn the LSN of the prepare record
   * @param endLsn the end LSN of the prepared transaction
   * @param prepareTime the prepare timestamp
   * @param xid the transaction
   * @param gid the global identifier given to PREPARE TRANSACTION
   */
  void beginPrepare(PgLsn prepareLsn, PgLsn endLsn, Instant prepareTime, long xid, String gid);

  /**
   * Prepare ({@code 'P'}) or Stream Prepare ({@code 'p'}), protocol 3+: the transaction is
   * prepared; it is committed or rolled back later.
   *
   * @param streamed true for Stream Prepare (the changes came in stream blocks of {@code xid})
   * @param flags the flags byte, unsigned (currently 0)
   * @param prepareLsn the LSN of the prepare record
   * @param endLsn the end LSN of the prepare record
   * @param prepareTime the prepare timestamp
   * @param xid the transaction
   * @param gid the global identifier
   */
  void prepare(
      boolean streamed,
      int flags,
      PgLsn prepareLsn,
      PgLsn endLsn,
      Instant prepareTime,
      long xid,
      String gid);

  /**
   * Commit Prepared ({@code 'K'}, protocol 3+): a prepared transaction committed.
   *
   * @param flags the flags byte, unsigned (currently 0)
   * @param commitLsn the LSN of the commit-prepared record
   * @param endLsn its end LSN
   * @param commitTime the commit timestamp
   * @param xid the transaction
   * @param gid the global identifier
   */
  void commitPrepared(
      int flags, PgLsn commitLsn, PgLsn endLsn, Instant commitTime, long xid, String gid);

  /**
   * Rollback Prepared ({@code 'r'}, protocol 3+): a prepared transaction was rolled back.
   *
   * @param flags the flags byte, unsigned (currently 0)
   * @param prepareEndLsn the end LSN of the prepare record
   * @param rollbackEndLsn the end LSN of the rollback-prepared record
   * @param prepareTime the prepare timestamp
   * @param rollbackTime the rollback timestamp
   * @param xid the transaction
   * @param gid the global identifier
   */
  void rollbackPrepared(
      int flags,
      PgLsn prepareEndLsn,
      PgLsn rollbackEndLsn,
      Instant prepareTime,
      Instant rollbackTime,
      long xid,
      String gid);

  /**
   * A change message passed on undecoded: Insert, Update, Delete, Truncate or transactional
   * Message. Its {@code [xid]} (see {@link PgOutputDecoder#changeXid()}) and relation oids were
   * read and found in the cache; the rest is decoded later by {@link PgOutputDecoder#decodeChange},
   * which reports any malformed content.
   *
   * @param message the whole message, position at its type byte; the listener may keep it (the
   *     replication stream hands out a fresh array per message) but must not modify it
   * @param hasXid true inside a stream block (the message has an {@code [xid]})
   * @param relations the relations the message refers to, in message order (one for Insert, Update,
   *     Delete; each truncated table; none for Message); not to be modified
   */
  void change(ByteBuffer message, boolean hasXid, RelationInfo[] relations);

  /**
   * A non-transactional Message ({@code 'M'} with flag bit 1 clear): a logical decoding message
   * written by {@code pg_logical_emit_message(false, ...)}, outside any transaction (sent only with
   * the {@code messages} option); decoded at once, never deferred.
   *
   * @param lsn the LSN of the message
   * @param prefix the message prefix
   * @param content the message content, a fresh array owned by the listener
   */
  void nonTransactionalMessage(PgLsn lsn, String prefix, byte[] content);
}
