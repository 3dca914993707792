package io.datum.cdc.core.internal;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcDecodingException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.TableId;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Decodes pgoutput messages (the payload of XLogData) and calls a {@link PgOutputListener}, keeping
 * the relation cache (a new Relation message replaces the entry: that is how DDL is followed) and
 * the type cache (Type messages). Layouts: PostgreSQL docs, 55.9 Logical Replication Message
 * Formats; src/backend/replication/logical/proto.c. Text values ({@code 't'}) are decoded by
 * {@link PgTextValues}, binary values ({@code 'b'}, sent with the pgoutput option {@code binary})
 * by {@link PgBinaryValues}, to the same Java values.
 *
 * <p>Protocol version 1 only for now. Versions 2 to 4 add streamed transactions (an {@code [xid]}
 * before the fields of Relation, Type, Insert, Update, Delete, Truncate and Message inside a
 * Stream Start/Stop block, see {@link #inStreamBlock}) and the messages S E c A b P K r p; until
 * they are implemented those message types raise {@link CdcDecodingException}.
 *
 * <p>One decoder per replication connection; not thread-safe.
 */
public final class PgOutputDecoder {

  /** Seconds from 1970-01-01 to 2000-01-01, PostgreSQL's timestamp epoch. */
  private static final long PG_EPOCH_SECONDS = 946_684_800L;

  private final int protocolVersion;
  /** True between Stream Start and Stream Stop (protocol 2+); always false in version 1. */
  private boolean inStreamBlock;

  private final Map<Integer, RelationInfo> relations = new HashMap<>();
  private final Map<Integer, String[]> types = new HashMap<>();
  private final PgOutputReader in = new PgOutputReader();

  /** Creates a decoder for protocol version 1. */
  public PgOutputDecoder() {
    this(1);
  }

  /**
   * Creates a decoder.
   *
   * @param protocolVersion the {@code proto_version} given to START_REPLICATION; only 1 for now
   * @throws CdcConfigurationException for any other version
   */
  public PgOutputDecoder(int protocolVersion) {
    if (protocolVersion != 1) {
      throw new CdcConfigurationException(
          "pgoutput protocol version " + protocolVersion + " is not supported yet (only 1)");
    }
    this.protocolVersion = protocolVersion;
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
   * Returns the cached description of a relation.
   *
   * @param oid the relation oid
   * @return the last Relation message's description, or null if none was received
   */
  public RelationInfo relation(int oid) {
    return relations.get(oid);
  }

  /**
   * Decodes one message: exactly the bytes between the buffer's position and limit. The buffer's
   * position and limit are left unchanged. The listener is called only after the whole message
   * decoded.
   *
   * @param message the message bytes, starting with the message type byte
   * @param listener receives the decoded message
   * @throws CdcDecodingException if the message is truncated, malformed, of an unknown type,
   *     refers to a relation not in the cache, or holds a value that does not parse as its type;
   *     the message names the message type and the byte offset within the message
   */
  public void decode(ByteBuffer message, PgOutputListener listener) {
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
    byte type = array[from];
    in.reset(array, from, to);
    in.readByte();
    switch (type) {
      case 'B' -> begin(listener);
      case 'C' -> commit(listener);
      case 'O' -> origin(listener);
      case 'R' -> relation(listener);
      case 'Y' -> type(listener);
      case 'I' -> insert(listener);
      case 'U' -> update(listener);
      case 'D' -> delete(listener);
      case 'T' -> truncate(listener);
      case 'M' -> message(listener);
      case 'S', 'E', 'c', 'A', 'b', 'P', 'K', 'r', 'p' ->
          throw in.error(
              0,
              "message type requires pgoutput protocol version 2 or later, but this decoder uses"
                  + " version "
                  + protocolVersion);
      default -> throw in.error(0, "unknown pgoutput message type");
    }
  }

  private static Instant pgTimestamp(long micros) {
    return Instant.ofEpochSecond(
        PG_EPOCH_SECONDS + Math.floorDiv(micros, 1_000_000L),
        Math.floorMod(micros, 1_000_000L) * 1_000L);
  }

  private void begin(PgOutputListener listener) {
    PgLsn finalLsn = PgLsn.of(in.readInt64());
    Instant time = pgTimestamp(in.readInt64());
    long xid = in.readInt32() & 0xFFFF_FFFFL;
    in.expectEnd();
    listener.begin(finalLsn, time, xid);
  }

  private void commit(PgOutputListener listener) {
    int flags = in.readUnsignedByte();
    PgLsn commitLsn = PgLsn.of(in.readInt64());
    PgLsn endLsn = PgLsn.of(in.readInt64());
    Instant time = pgTimestamp(in.readInt64());
    in.expectEnd();
    listener.commit(flags, commitLsn, endLsn, time);
  }

  private void origin(PgOutputListener listener) {
    PgLsn lsn = PgLsn.of(in.readInt64());
    String name = in.readString();
    in.expectEnd();
    listener.origin(lsn, name);
  }

  /** Reads the transaction id that precedes the fields inside a stream block (protocol 2+). */
  private void readStreamXid() {
    if (inStreamBlock) {
      in.readInt32(); // kept for protocol 2+: the streamed transaction this message belongs to
    }
  }

  private static String namespace(String sent) {
    return sent.isEmpty() ? "pg_catalog" : sent;
  }

  private void relation(PgOutputListener listener) {
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
      valueTypes[i] = resolveType(typeOid);
    }
    in.expectEnd();
    RelationInfo relation =
        RelationInfo.of(oid, new TableId(namespace, name), identity, columns, valueTypes);
    relations.put(oid, relation);
    listener.relation(relation);
  }

  /** Maps a column type oid to the builtin type whose text decoder applies. */
  private int resolveType(int typeOid) {
    String[] sent = types.get(typeOid);
    if (sent != null && !PgTextValues.isBuiltin(typeOid) && "pg_catalog".equals(sent[0])) {
      int builtin = PgTextValues.builtinOid(sent[1]);
      if (builtin != 0) {
        return builtin;
      }
    }
    return typeOid;
  }

  private void type(PgOutputListener listener) {
    readStreamXid();
    int oid = in.readInt32();
    String namespace = namespace(in.readString());
    String name = in.readString();
    in.expectEnd();
    types.put(oid, new String[] {namespace, name});
    listener.type(oid, namespace, name);
  }

  private RelationInfo requireRelation() {
    int at = in.offset();
    int oid = in.readInt32();
    RelationInfo relation = relations.get(oid);
    if (relation == null) {
      throw in.error(
          at,
          "relation oid "
              + Integer.toUnsignedString(oid)
              + " is unknown: no Relation message for it was received on this connection");
    }
    return relation;
  }

  private void insert(PgOutputListener listener) {
    readStreamXid();
    RelationInfo relation = requireRelation();
    expectTupleType("N");
    Object[] values = readTuple(relation, false);
    in.expectEnd();
    listener.insert(relation, Row.of(relation.columns(), values));
  }

  private void update(PgOutputListener listener) {
    readStreamXid();
    RelationInfo relation = requireRelation();
    byte kind = expectTupleType("KON");
    Object[] old = null;
    boolean full = kind == 'O';
    if (kind != 'N') {
      old = readTuple(relation, !full);
      expectTupleType("N");
    }
    Object[] values = readTuple(relation, false);
    in.expectEnd();
    Row oldRow = null;
    if (old != null) {
      fillUnchangedToast(relation, values, old, full);
      oldRow = Row.of(full ? relation.columns() : relation.keyColumns(), old);
    }
    listener.update(relation, oldRow, full, Row.of(relation.columns(), values));
  }

  /**
   * Replaces unchanged-TOAST markers of the new row by the old row's value where the old tuple
   * carries it: every column of an {@code 'O'} tuple, the key columns of a {@code 'K'} tuple
   * (an unchanged TOASTed value is the old value, so either is exact).
   */
  private static void fillUnchangedToast(
      RelationInfo relation, Object[] values, Object[] old, boolean full) {
    int[] keys = relation.keyIndexes();
    int n = full ? values.length : keys.length;
    for (int j = 0; j < n; j++) {
      int i = full ? j : keys[j];
      if (values[i] == Row.UNCHANGED_TOAST && old[j] != Row.UNCHANGED_TOAST) {
        values[i] = old[j];
      }
    }
  }

  private void delete(PgOutputListener listener) {
    readStreamXid();
    RelationInfo relation = requireRelation();
    boolean full = expectTupleType("KO") == 'O';
    Object[] old = readTuple(relation, !full);
    in.expectEnd();
    listener.delete(
        relation, Row.of(full ? relation.columns() : relation.keyColumns(), old), full);
  }

  private void truncate(PgOutputListener listener) {
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

  private void message(PgOutputListener listener) {
    readStreamXid();
    boolean transactional = (in.readUnsignedByte() & 1) != 0;
    PgLsn lsn = PgLsn.of(in.readInt64());
    String prefix = in.readString();
    int start = in.readCountedBytes("message content", null);
    byte[] content = new byte[in.offset() - in.offsetOf(start)];
    System.arraycopy(in.array(), start, content, 0, content.length);
    in.expectEnd();
    listener.message(transactional, lsn, prefix, content);
  }

  /** Reads the byte announcing a tuple and checks it is one of {@code allowed}. */
  private byte expectTupleType(String allowed) {
    int at = in.offset();
    byte kind = in.readByte();
    if (allowed.indexOf(kind) < 0) {
      throw in.error(
          at,
          "expected "
              + String.join(" or ", allowed.chars().mapToObj(c -> "'" + (char) c + "'").toList())
              + " before a tuple, got "
              + PgOutputReader.describeByte(kind));
    }
    return kind;
  }

  /**
   * Reads TupleData. For a key tuple ({@code keyOnly}) only the key columns are kept: PostgreSQL
   * sends the others as {@code 'n'}, meaning "not sent" there.
   *
   * @return the values, one per column (or per key column), with {@link Row#UNCHANGED_TOAST}
   */
  private Object[] readTuple(RelationInfo relation, boolean keyOnly) {
    int at = in.offset();
    int count = in.readUnsignedInt16();
    List<ColumnInfo> columns = relation.columns();
    if (count != columns.size()) {
      throw in.error(
          at,
          "tuple has "
              + count
              + " columns but relation "
              + relation.describe()
              + " has "
              + columns.size());
    }
    Object[] values = new Object[keyOnly ? relation.keyIndexes().length : count];
    int k = 0;
    for (int i = 0; i < count; i++) {
      boolean wanted = !keyOnly || columns.get(i).key();
      int kindAt = in.offset();
      byte kind = in.readByte();
      Object value;
      switch (kind) {
        case 'n' -> value = null;
        case 'u' -> value = Row.UNCHANGED_TOAST;
        case 't' -> {
          int start = in.readCountedBytes("value", columns.get(i).name());
          int length = in.offset() - in.offsetOf(start);
          value = wanted ? decodeValue(relation, i, start, length) : null;
        }
        case 'b' -> {
          int start = in.readCountedBytes("value", columns.get(i).name());
          int length = in.offset() - in.offsetOf(start);
          value = wanted ? decodeBinaryValue(relation, i, start, length) : null;
        }
        default -> throw in.error(
            kindAt,
            "unknown tuple data kind "
                + PgOutputReader.describeByte(kind)
                + " for column \""
                + columns.get(i).name()
                + "\" of "
                + relation.describe());
      }
      if (keyOnly) {
        if (wanted) {
          values[k++] = value;
        }
      } else {
        values[i] = value;
      }
    }
    return values;
  }

  private Object decodeValue(RelationInfo relation, int column, int start, int length) {
    int oid = relation.valueTypeOids()[column];
    try {
      return PgTextValues.decode(oid, in.array(), start, length);
    } catch (RuntimeException e) {
      ColumnInfo info = relation.columns().get(column);
      throw in.error(
          in.offsetOf(start),
          PgTextValues.describeFailure(
              info.name(),
              relation.describe(),
              info.typeOid(),
              oid,
              PgTextValues.excerpt(in.array(), start, length),
              e),
          e);
    }
  }

  /** Decodes a binary ({@code 'b'}) value with {@link PgBinaryValues}, naming the column. */
  private Object decodeBinaryValue(RelationInfo relation, int column, int start, int length) {
    int oid = relation.valueTypeOids()[column];
    try {
      return PgBinaryValues.decode(oid, in.array(), start, length);
    } catch (RuntimeException e) {
      ColumnInfo info = relation.columns().get(column);
      throw in.error(
          in.offsetOf(start),
          PgBinaryValues.describeFailure(
              info.name(), relation.describe(), info.typeOid(), oid, in.array(), start, length, e),
          e);
    }
  }
}
