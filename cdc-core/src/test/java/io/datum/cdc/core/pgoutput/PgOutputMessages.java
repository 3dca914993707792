package io.datum.cdc.core.pgoutput;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * Builds pgoutput protocol-1 messages byte by byte, as src/backend/replication/logical/proto.c
 * writes them (big-endian, NUL-terminated strings), for decoder tests.
 */
public final class PgOutputMessages {

  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final DataOutputStream out = new DataOutputStream(bytes);

  private PgOutputMessages(char type) {
    i8(type);
  }

  /** Starts a message of the given type byte. */
  public static PgOutputMessages message(char type) {
    return new PgOutputMessages(type);
  }

  /** Microseconds since 2000-01-01T00:00:00Z of an instant. */
  static long pgMicros(Instant instant) {
    long seconds = instant.getEpochSecond() - 946_684_800L;
    return seconds * 1_000_000L + instant.getNano() / 1_000;
  }

  public PgOutputMessages i8(int v) {
    try {
      out.writeByte(v);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }

  public PgOutputMessages i16(int v) {
    try {
      out.writeShort(v);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }

  public PgOutputMessages i32(int v) {
    try {
      out.writeInt(v);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }

  PgOutputMessages i64(long v) {
    try {
      out.writeLong(v);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }

  PgOutputMessages raw(byte[] b) {
    bytes.writeBytes(b);
    return this;
  }

  /** A NUL-terminated UTF-8 string. */
  public PgOutputMessages str(String s) {
    return raw(s.getBytes(StandardCharsets.UTF_8)).i8(0);
  }

  /** Tuple column: text value ({@code 't'}, length, UTF-8 bytes). */
  public PgOutputMessages text(String value) {
    byte[] b = value.getBytes(StandardCharsets.UTF_8);
    return i8('t').i32(b.length).raw(b);
  }

  /** Tuple column: binary value ({@code 'b'}, length, the type's send-function bytes). */
  public PgOutputMessages binary(byte[] value) {
    return i8('b').i32(value.length).raw(value);
  }

  /** Tuple column: SQL NULL ({@code 'n'}). */
  public PgOutputMessages nul() {
    return i8('n');
  }

  /** Tuple column: unchanged TOAST ({@code 'u'}). */
  PgOutputMessages unchanged() {
    return i8('u');
  }

  /** Relation message column: flags, name, type oid, typmod. */
  public PgOutputMessages column(boolean key, String name, int typeOid, int typmod) {
    return i8(key ? 1 : 0).str(name).i32(typeOid).i32(typmod);
  }

  public byte[] build() {
    return bytes.toByteArray();
  }

  // ---- whole messages ----

  static byte[] begin(long finalLsn, Instant commitTime, int xid) {
    return message('B').i64(finalLsn).i64(pgMicros(commitTime)).i32(xid).build();
  }

  static byte[] commit(int flags, long commitLsn, long endLsn, Instant commitTime) {
    return message('C').i8(flags).i64(commitLsn).i64(endLsn).i64(pgMicros(commitTime)).build();
  }

  /**
   * Relation 16390 {@code public.orders}, replica identity default: id int4 (key), note text,
   * amount numeric(10,3).
   */
  static byte[] ordersRelation() {
    return message('R')
        .i32(16390)
        .str("public")
        .str("orders")
        .i8('d')
        .i16(3)
        .column(true, "id", 23, -1)
        .column(false, "note", 25, -1)
        .column(false, "amount", 1700, (10 << 16 | 3) + 4)
        .build();
  }
}
