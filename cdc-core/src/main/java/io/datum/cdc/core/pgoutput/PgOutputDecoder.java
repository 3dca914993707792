package io.datum.cdc.core.pgoutput;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcDecodingException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.core.relation.RelationCache;
import io.datum.cdc.core.relation.RelationInfo;
import io.datum.cdc.core.relation.ValueDecodingException;
import io.datum.cdc.core.relation.ValueFailure;
import io.datum.cdc.core.types.PgBinaryCodec;
import io.datum.cdc.core.types.PgBinaryTypes;
import io.datum.cdc.core.types.PgBinaryValues;
import io.datum.cdc.core.types.PgTextValues;
import io.datum.cdc.core.types.PgTypeCatalog;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.Row;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * Decodes pgoutput messages (the payload of XLogData) for a {@link TransactionListener}, passing
 * change messages on undecoded for {@link #decodeChange} into a {@link ChangeListener}; keeps the
 * relation cache (a new Relation message replaces the entry: that is how DDL is followed) and the
 * type cache (Type messages). Layouts: PostgreSQL docs, 55.9 Logical Replication Message Formats;
 * src/backend/replication/logical/proto.c. Text values ({@code 't'}) are decoded by {@link
 * PgTextValues}, binary values ({@code 'b'}, sent with the pgoutput option {@code binary}) by
 * {@link PgBinaryValues}, to the same Java values; in binary mode, columns of types {@link
 * PgBinaryValues} does not decode (user-defined types, ranges) get a {@link PgBinaryCodec} from a
 * {@link PgBinaryTypes} when their Relation message arrives, never per row.
 *
 * <p>Protocol versions 1 to 4. Version 2 (PostgreSQL 14) adds streamed transactions: Stream
 * Start/Stop/Commit/Abort, and an {@code [xid]} before the fields of Relation, Type, Insert,
 * Update, Delete, Truncate and Message inside a Stream Start/Stop block (see {@link #changeXid}).
 * Version 3 (15) adds two-phase commit: Begin Prepare, Prepare, Commit Prepared, Rollback Prepared,
 * Stream Prepare. Version 4 (16) adds the abort LSN and time to Stream Abort, sent only when
 * streaming is {@code parallel}. A message type newer than the decoder's version is an error.
 *
 * <p>One decoder per replication connection; not thread-safe.
 */
public final class PgOutputDecoder {

  /** Seconds from 1970-01-01 to 2000-01-01, PostgreSQL's timestamp epoch. */
  private static final long PG_EPOCH_SECONDS = 946_684_800L;

  private final int protocolVersion;
  private final boolean abortInfo;

  /** True between Stream Start and Stream Stop (protocol 2+); always false in version 1. */
  private boolean inStreamBlock;

  /** The [xid] of the last change message decoded in a stream block, 0 outside one. */
  private long changeXid;

  /** While {@link #decodeChange} runs: the relations to use instead of the cache, in order. */
  private RelationInfo[] replayRelations;

  private int replayNext;

  /** The Relation and Type messages received on this connection. */
  private final RelationCache cache;

  private final PgOutputReader in = new PgOutputReader();
  private final PgTupleReader tuples = new PgTupleReader(in);

  /** Creates a decoder for protocol version 1. */
  public PgOutputDecoder() {
    this(1, false);
  }

  /**
   * Creates a decoder for a stream in text format.
   *
   * @param protocolVersion the {@code proto_version} given to START_REPLICATION, 1 to 4
   * @param abortInfo true when Stream Abort carries the abort LSN and time: protocol 4 with {@code
   *     streaming = parallel} (src/backend/replication/pgoutput/pgoutput.c, pgoutput_stream_abort,
   *     {@code write_abort_info})
   * @throws CdcConfigurationException for a version outside 1 to 4, or abort info below 4
   */
  public PgOutputDecoder(int protocolVersion, boolean abortInfo) {
    this(protocolVersion, abortInfo, null);
  }

  /**
   * Creates a decoder that resolves binary codecs for column types {@link PgBinaryValues} does not
   * decode (user-defined types, builtin ranges) when a Relation message arrives.
   *
   * @param protocolVersion the {@code proto_version} given to START_REPLICATION, 1 to 4
   * @param abortInfo true when Stream Abort carries the abort LSN and time
   * @param binaryTypes where codecs come from (the source's {@link PgTypeCatalog}); null when the
   *     stream is in text format: relations then carry no codecs and cost nothing more
   * @throws CdcConfigurationException for a version outside 1 to 4, or abort info below 4
   */
  public PgOutputDecoder(int protocolVersion, boolean abortInfo, PgBinaryTypes binaryTypes) {
    if (protocolVersion < 1 || protocolVersion > 4) {
      throw new CdcConfigurationException(
          "pgoutput protocol version " + protocolVersion + " is not supported (1 to 4)");
    }
    if (abortInfo && protocolVersion < 4) {
      throw new CdcConfigurationException(
          "Stream Abort carries the abort LSN only with protocol version 4, not "
              + protocolVersion);
    }
    this.protocolVersion = protocolVersion;
    this.abortInfo = abortInfo;
    this.cache = new RelationCache(binaryTypes);
  }

  /**
   * Sets what a column value that does not decode does: {@code STOP} (the default) and {@code SKIP}
   * throw a {@link ValueDecodingException}, {@code RAW} keeps the value as sent (a String or a
   * byte[]) and marks the column in the row ({@link Row#undecodedColumns()}); {@link
   * #takeFailures()} then lists them.
   *
   * @param policy the policy, not null
   */
  public void valueErrors(ValueFailure.Policy policy) {
    tuples.policy(Objects.requireNonNull(policy, "policy"));
  }

  /**
   * Returns the values the last {@link #decodeChange} kept raw under the {@code RAW} policy, and
   * forgets them; the next message decoded forgets them too.
   *
   * @return the failures, or null if every value decoded
   */
  public List<ValueFailure> takeFailures() {
    return tuples.takeFailures();
  }

  /** Returns the protocol version this decoder reads. */
  public int protocolVersion() {
    return protocolVersion;
  }

  /** Returns true inside a Stream Start/Stop block (never with protocol version 1). */
  boolean inStreamBlock() {
    return inStreamBlock;
  }

  /**
   * Returns the {@code [xid]} of the change (Insert, Update, Delete, Truncate, Message) the decoder
   * last passed to its listener: inside a Stream Start/Stop block the (sub)transaction that made
   * the change, which may be a subtransaction of the streamed transaction; 0 outside a block. Valid
   * during and after the listener call, until the next message.
   *
   * @return an unsigned 32-bit transaction id, or 0
   */
  public long changeXid() {
    return changeXid;
  }

  /**
   * Returns the cached description of a relation.
   *
   * @param oid the relation oid
   * @return the last Relation message's description, or null if none was received
   */
  public RelationInfo relation(int oid) {
    RelationInfo[] cached = cache.get(oid);
    return cached == null ? null : cached[0];
  }

  /**
   * Decodes one message: exactly the bytes between the buffer's position and limit. The buffer's
   * position and limit are left unchanged. The listener is called only after the whole message
   * decoded (a change message: its header, see {@link TransactionListener#change}).
   *
   * @param message the message bytes, starting with the message type byte
   * @param listener receives the decoded message
   * @throws CdcDecodingException if the message is truncated, malformed, of an unknown type, or
   *     refers to a relation not in the cache; the message names the message type and the byte
   *     offset within the message
   */
  public void decode(ByteBuffer message, TransactionListener listener) {
    byte type = start(message);
    switch (type) {
      case 'B' -> begin(listener);
      case 'C' -> commit(listener);
      case 'O' -> origin(listener);
      case 'R' -> relation(listener);
      case 'Y' -> type(listener);
      case 'I', 'U', 'D', 'T', 'M' -> defer(type, message, listener);
      case 'S' -> streamStart(listener);
      case 'E' -> streamStop(listener);
      case 'c' -> streamCommit(listener);
      case 'A' -> streamAbort(listener);
      case 'b' -> beginPrepare(listener);
      case 'P' -> prepare(listener, false);
      case 'p' -> prepare(listener, true);
      case 'K' -> commitPrepared(listener);
      case 'r' -> rollbackPrepared(listener);
      default -> throw in.error(0, "unknown pgoutput message type");
    }
  }

  /**
   * Points the reader at one message and reads its type byte.
   *
   * @return the type byte
   */
  private byte start(ByteBuffer message) {
    byte[] array;
    int from;
    int to;
    if (message.hasArray()) {
      array = message.array();
      from = message.arrayOffset() + message.position();
      to = message.arrayOffset() + message.limit();
    } else {
      array = new byte[message.remaining()];
      message.duplicate().get(array);
      from = 0;
      to = array.length;
    }
    if (from >= to) {
      throw new CdcDecodingException("pgoutput message is empty (0 bytes), offset 0");
    }
    in.reset(array, from, to);
    in.readByte();
    tuples.takeFailures(); // the raw values of the message before are not this one's
    return array[from];
  }

  /**
   * Decodes a change message (Insert, Update, Delete, Truncate or transactional Message) that
   * {@link #decode} passed on undecoded, with the relations it referred to then instead of the
   * cache (which may have changed since), and calls the listener's matching method. A transaction
   * is replayed this way one change at a time as the hand-off takes its events, from memory or from
   * its spill file.
   *
   * @param message the message bytes exactly as first decoded, starting with the type byte
   * @param hasXid true if the message came inside a Stream Start/Stop block (it has an [xid])
   * @param relations the relations of its relation oids, in message order (Truncate: several)
   * @param listener receives the decoded change
   * @throws CdcDecodingException as {@link #decode}, if a value does not parse as its type, or if
   *     the message is not a change
   */
  public void decodeChange(
      ByteBuffer message, boolean hasXid, RelationInfo[] relations, ChangeListener listener) {
    boolean wasInBlock = inStreamBlock;
    inStreamBlock = hasXid;
    replayRelations = relations;
    replayNext = 0;
    try {
      byte type = start(message);
      switch (type) {
        case 'I' -> insert(listener);
        case 'U' -> update(listener);
        case 'D' -> delete(listener);
        case 'T' -> truncate(listener);
        case 'M' -> message(listener);
        default ->
            throw new CdcDecodingException(
                "pgoutput "
                    + PgOutputReader.messageName(type)
                    + " message, offset 0: not a change");
      }
    } finally {
      inStreamBlock = wasInBlock;
      replayRelations = null;
    }
  }

  /**
   * Reads the header of a change message and passes the message on undecoded; a non-transactional
   * Message is decoded and passed on at once.
   */
  private void defer(byte type, ByteBuffer message, TransactionListener listener) {
    RelationInfo[] refs;
    switch (type) {
      case 'I', 'U', 'D' -> {
        readStreamXid();
        refs = requireRelationArray();
        if (leftOut != null && refs[0].table().equals(leftOut)) {
          return;
        }
      }
      case 'T' -> {
        readStreamXid();
        int at = in.offset();
        int count = in.readInt32();
        if (count < 0) {
          throw in.error(at, "negative relation count " + count);
        }
        in.readUnsignedByte();
        refs = new RelationInfo[count];
        for (int i = 0; i < count; i++) {
          refs[i] = requireRelation();
        }
        in.expectEnd();
      }
      default -> { // 'M'
        readStreamXid();
        if ((in.readUnsignedByte() & 1) == 0) {
          PgLsn lsn = PgLsn.of(in.readInt64());
          String prefix = in.readString();
          listener.nonTransactionalMessage(lsn, prefix, readMessageContent());
          return;
        }
        refs = NO_RELATIONS;
      }
    }
    listener.change(message, inStreamBlock, refs);
  }

  private static final RelationInfo[] NO_RELATIONS = new RelationInfo[0];

  /** A table whose row changes are left out (the checkpoint store's own), or null. */
  private TableId leftOut;

  /**
   * Leaves out the inserts, updates and deletes of one table: they are never passed on (a TRUNCATE
   * naming it with other tables still is). For the checkpoint store's own table in the decoded
   * database, whose changes are the source's own acknowledgements.
   *
   * @param table the table, or null to leave nothing out
   */
  public void leaveOut(TableId table) {
    this.leftOut = table;
  }

  private void requireVersion(int version) {
    if (protocolVersion < version) {
      throw in.error(
          0,
          "message type requires pgoutput protocol version "
              + version
              + " or later, but this decoder uses version "
              + protocolVersion);
    }
  }

  private long readXid() {
    return in.readInt32() & 0xFFFF_FFFFL;
  }

  private void streamStart(TransactionListener listener) {
    requireVersion(2);
    if (inStreamBlock) {
      throw in.error(0, "Stream Start inside a stream block (no Stream Stop before it)");
    }
    long xid = readXid();
    int firstAt = in.offset();
    int first = in.readUnsignedByte();
    if (first > 1) {
      throw in.error(firstAt, "first-segment flag must be 0 or 1, was " + first);
    }
    in.expectEnd();
    inStreamBlock = true;
    listener.streamStart(xid, first == 1);
  }

  private void streamStop(TransactionListener listener) {
    requireVersion(2);
    if (!inStreamBlock) {
      throw in.error(0, "Stream Stop outside a stream block");
    }
    in.expectEnd();
    inStreamBlock = false;
    listener.streamStop();
  }

  private void requireOutsideBlock() {
    if (inStreamBlock) {
      throw in.error(0, "message inside a stream block (no Stream Stop before it)");
    }
  }

  private void streamCommit(TransactionListener listener) {
    requireVersion(2);
    requireOutsideBlock();
    long xid = readXid();
    int flags = in.readUnsignedByte();
    PgLsn commitLsn = PgLsn.of(in.readInt64());
    PgLsn endLsn = PgLsn.of(in.readInt64());
    Instant time = pgTimestamp(in.readInt64());
    in.expectEnd();
    listener.streamCommit(xid, flags, commitLsn, endLsn, time);
  }

  private void streamAbort(TransactionListener listener) {
    requireVersion(2);
    requireOutsideBlock();
    long xid = readXid();
    long subxid = readXid();
    PgLsn abortLsn = null;
    Instant abortTime = null;
    if (abortInfo) {
      abortLsn = PgLsn.of(in.readInt64());
      abortTime = pgTimestamp(in.readInt64());
    }
    in.expectEnd();
    listener.streamAbort(xid, subxid, abortLsn, abortTime);
  }

  private void beginPrepare(TransactionListener listener) {
    requireVersion(3);
    requireOutsideBlock();
    PgLsn prepareLsn = PgLsn.of(in.readInt64());
    PgLsn endLsn = PgLsn.of(in.readInt64());
    Instant time = pgTimestamp(in.readInt64());
    long xid = readXid();
    String gid = in.readString();
    in.expectEnd();
    listener.beginPrepare(prepareLsn, endLsn, time, xid, gid);
  }

  /**
   * The layout Prepare, Stream Prepare and Commit Prepared share: flags i8, LSN i64, end LSN i64,
   * timestamp i64, xid i32, gid str (proto.c, logicalrep_write_prepare_common and
   * logicalrep_write_commit_prepared).
   */
  private record TwoPhaseFields(
      int flags, PgLsn lsn, PgLsn endLsn, Instant time, long xid, String gid) {}

  private TwoPhaseFields readTwoPhaseFields() {
    requireVersion(3);
    requireOutsideBlock();
    int flags = in.readUnsignedByte();
    PgLsn lsn = PgLsn.of(in.readInt64());
    PgLsn endLsn = PgLsn.of(in.readInt64());
    Instant time = pgTimestamp(in.readInt64());
    long xid = readXid();
    String gid = in.readString();
    in.expectEnd();
    return new TwoPhaseFields(flags, lsn, endLsn, time, xid, gid);
  }

  private void prepare(TransactionListener listener, boolean streamed) {
    TwoPhaseFields f = readTwoPhaseFields();
    listener.prepare(streamed, f.flags(), f.lsn(), f.endLsn(), f.time(), f.xid(), f.gid());
  }

  private void commitPrepared(TransactionListener listener) {
    TwoPhaseFields f = readTwoPhaseFields();
    listener.commitPrepared(f.flags(), f.lsn(), f.endLsn(), f.time(), f.xid(), f.gid());
  }

  private void rollbackPrepared(TransactionListener listener) {
    requireVersion(3);
    requireOutsideBlock();
    int flags = in.readUnsignedByte();
    PgLsn prepareEndLsn = PgLsn.of(in.readInt64());
    PgLsn rollbackEndLsn = PgLsn.of(in.readInt64());
    Instant prepareTime = pgTimestamp(in.readInt64());
    Instant rollbackTime = pgTimestamp(in.readInt64());
    long xid = readXid();
    String gid = in.readString();
    in.expectEnd();
    listener.rollbackPrepared(
        flags, prepareEndLsn, rollbackEndLsn, prepareTime, rollbackTime, xid, gid);
  }

  private static Instant pgTimestamp(long micros) {
    return Instant.ofEpochSecond(
        PG_EPOCH_SECONDS + Math.floorDiv(micros, 1_000_000L),
        Math.floorMod(micros, 1_000_000L) * 1_000L);
  }

  private void begin(TransactionListener listener) {
    requireOutsideBlock();
    PgLsn finalLsn = PgLsn.of(in.readInt64());
    Instant time = pgTimestamp(in.readInt64());
    long xid = in.readInt32() & 0xFFFF_FFFFL;
    in.expectEnd();
    listener.begin(finalLsn, time, xid);
  }

  private void commit(TransactionListener listener) {
    requireOutsideBlock();
    int flags = in.readUnsignedByte();
    PgLsn commitLsn = PgLsn.of(in.readInt64());
    PgLsn endLsn = PgLsn.of(in.readInt64());
    Instant time = pgTimestamp(in.readInt64());
    in.expectEnd();
    listener.commit(flags, commitLsn, endLsn, time);
  }

  private void origin(TransactionListener listener) {
    PgLsn lsn = PgLsn.of(in.readInt64());
    String name = in.readString();
    in.expectEnd();
    listener.origin(lsn, name);
  }

  /**
   * Reads the transaction id that precedes the fields inside a stream block (protocol 2+) into
   * {@link #changeXid}; 0 outside a block.
   */
  private void readStreamXid() {
    changeXid = inStreamBlock ? readXid() : 0;
  }

  private static String namespace(String sent) {
    return sent.isEmpty() ? "pg_catalog" : sent;
  }

  private void relation(TransactionListener listener) {
    readStreamXid();
    int oid = in.readInt32();
    String namespace = namespace(in.readString());
    String name = in.readString();
    int identityAt = in.offset();
    char identity = (char) in.readUnsignedByte();
    if ("dnfi".indexOf(identity) < 0) {
      throw in.error(identityAt, "unknown replica identity 0x" + Integer.toHexString(identity));
    }
    int count = in.readUnsignedInt16();
    List<ColumnInfo> columns = new ArrayList<>(Math.min(count, 1664));
    int[] valueTypes = new int[count];
    for (int i = 0; i < count; i++) {
      int flags = in.readUnsignedByte();
      String column = in.readString();
      int typeOid = in.readInt32();
      int typeModifier = in.readInt32();
      columns.add(new ColumnInfo(column, typeOid, typeModifier, (flags & 1) != 0));
      valueTypes[i] = cache.valueType(typeOid);
    }
    in.expectEnd();
    RelationInfo relation =
        RelationInfo.of(oid, new TableId(namespace, name), identity, columns, valueTypes);
    try {
      relation = cache.add(relation);
    } catch (RuntimeException e) {
      throw in.error(
          0,
          "cannot resolve the column types of "
              + relation.describe()
              + " for binary decoding: "
              + e.getMessage(),
          e);
    }
    listener.relation(relation);
  }

  private void type(TransactionListener listener) {
    readStreamXid();
    int oid = in.readInt32();
    String namespace = namespace(in.readString());
    String name = in.readString();
    in.expectEnd();
    cache.addType(oid, namespace, name);
    listener.type(oid, namespace, name);
  }

  private RelationInfo requireRelation() {
    return replayRelations != null ? replayedRelation() : requireRelationArray()[0];
  }

  /**
   * In {@link #decodeChange}: reads a relation oid and returns the relation recorded for it when
   * the message was first decoded (no allocation: this runs once per delivered change).
   */
  private RelationInfo replayedRelation() {
    int at = in.offset();
    int oid = in.readInt32();
    if (replayNext >= replayRelations.length || replayRelations[replayNext].oid() != oid) {
      throw in.error(
          at,
          "relation oid "
              + Integer.toUnsignedString(oid)
              + " differs from the one recorded when the message was first decoded");
    }
    return replayRelations[replayNext++];
  }

  /** Reads a relation oid and returns its one-element cache entry. */
  private RelationInfo[] requireRelationArray() {
    int at = in.offset();
    int oid = in.readInt32();
    RelationInfo[] cached = cache.get(oid);
    if (cached == null) {
      throw in.error(
          at,
          "relation oid "
              + Integer.toUnsignedString(oid)
              + " is unknown: no Relation message for it was received on this connection");
    }
    return cached;
  }

  private void insert(ChangeListener listener) {
    readStreamXid();
    RelationInfo relation = requireRelation();
    tuples.expectTupleType("N");
    Object[] values = tuples.readTuple(relation, false);
    int[] raw = tuples.takeUndecoded();
    in.expectEnd();
    listener.insert(relation, Row.of(relation.columns(), values, raw));
  }

  private void update(ChangeListener listener) {
    readStreamXid();
    RelationInfo relation = requireRelation();
    byte kind = tuples.expectTupleType("KON");
    Object[] old = null;
    boolean full = kind == 'O';
    int[] oldRaw = null;
    if (kind != 'N') {
      old = tuples.readTuple(relation, !full);
      oldRaw = tuples.takeUndecoded();
      tuples.expectTupleType("N");
    }
    Object[] values = tuples.readTuple(relation, false);
    int[] raw = tuples.takeUndecoded();
    in.expectEnd();
    Row oldRow = null;
    if (old != null) {
      PgTupleReader.fillUnchangedToast(relation, values, old, full);
      raw = PgTupleReader.fillUndecoded(relation, values, old, full, raw, oldRaw);
      oldRow = Row.of(full ? relation.columns() : relation.keyColumns(), old, oldRaw);
    }
    listener.update(relation, oldRow, full, Row.of(relation.columns(), values, raw));
  }

  private void delete(ChangeListener listener) {
    readStreamXid();
    RelationInfo relation = requireRelation();
    boolean full = tuples.expectTupleType("KO") == 'O';
    Object[] old = tuples.readTuple(relation, !full);
    int[] raw = tuples.takeUndecoded();
    in.expectEnd();
    listener.delete(
        relation, Row.of(full ? relation.columns() : relation.keyColumns(), old, raw), full);
  }

  private void truncate(ChangeListener listener) {
    readStreamXid();
    int at = in.offset();
    int count = in.readInt32();
    if (count < 0) {
      throw in.error(at, "negative relation count " + count);
    }
    int options = in.readUnsignedByte();
    List<RelationInfo> truncated = new ArrayList<>(Math.min(count, 1024));
    for (int i = 0; i < count; i++) {
      truncated.add(requireRelation());
    }
    in.expectEnd();
    listener.truncate(
        Collections.unmodifiableList(truncated), (options & 1) != 0, (options & 2) != 0);
  }

  private void message(ChangeListener listener) {
    readStreamXid();
    int flagsAt = in.offset();
    if ((in.readUnsignedByte() & 1) == 0) {
      throw in.error(flagsAt, "a non-transactional Message is not a change");
    }
    PgLsn lsn = PgLsn.of(in.readInt64());
    String prefix = in.readString();
    listener.message(lsn, prefix, readMessageContent());
  }

  /** Reads a Message's counted content, which ends the message, into a fresh array. */
  private byte[] readMessageContent() {
    int start = in.readCountedBytes("message content", null);
    byte[] content = new byte[in.offset() - in.offsetOf(start)];
    System.arraycopy(in.array(), start, content, 0, content.length);
    in.expectEnd();
    return content;
  }
}
