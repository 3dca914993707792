package io.datum.cdc.core.pgoutput;

import static io.datum.cdc.core.pgoutput.PgOutputMessages.message;
import static io.datum.cdc.core.pgoutput.PgOutputMessages.pgMicros;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.datum.cdc.CdcDecodingException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.relation.RelationInfo;
import io.datum.cdc.event.Row;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Protocol 2-4 messages (PostgreSQL docs, 55.9 Logical Replication Message Formats; writer:
 * src/backend/replication/logical/proto.c): streamed transactions, two-phase commit, the abort info
 * of protocol 4, and replaying a change with recorded relations.
 */
class PgOutputDecoderStreamingTest {

  private static final Instant T1 = Instant.parse("2026-11-30T10:18:40.123456Z");
  private static final Instant T2 = Instant.parse("1999-12-31T23:59:59.999999Z");

  private final PgOutputDecoder decoder = new PgOutputDecoder(4, true);
  private final PgOutputDecoderTest.Recorder recorder = new PgOutputDecoderTest.Recorder(decoder);

  private Object[] decode(byte[] message) {
    return decode(decoder, message);
  }

  private Object[] decode(PgOutputDecoder d, byte[] message) {
    int before = recorder.calls.size();
    d.decode(ByteBuffer.wrap(message), recorder);
    assertEquals(before + 1, recorder.calls.size());
    return recorder.last();
  }

  private static byte[] streamStart(int xid, int first) {
    return message('S').i32(xid).i8(first).build();
  }

  private static byte[] streamStop() {
    return message('E').build();
  }

  /** An Insert into public.orders inside a stream block, made by (sub)transaction xid. */
  private static byte[] streamedInsert(int xid, String id) {
    return message('I').i32(xid).i32(16390).i8('N').i16(3).text(id).text("x").nul().build();
  }

  private static byte[] streamedRelation(int xid) {
    byte[] plain = PgOutputMessages.ordersRelation();
    return message('R').i32(xid).raw(Arrays.copyOfRange(plain, 1, plain.length)).build();
  }

  @Test
  void streamBlockCarriesTheXidOfEachChange() {
    assertEquals(List2.of("streamStart", 0xFFFF_FFFEL, true), List2.of(decode(streamStart(-2, 1))));
    assertTrue(decoder.inStreamBlock());
    RelationInfo orders = (RelationInfo) decode(streamedRelation(-2))[1];
    assertEquals("orders", orders.table().table());
    Object[] insert = decode(streamedInsert(701, "7"));
    assertEquals("insert", insert[0]);
    assertSame(orders, insert[1]);
    assertEquals(7, ((Row) insert[2]).get("id"));
    assertEquals(701L, decoder.changeXid(), "the subtransaction's xid");
    decode(message('M').i32(702).i8(1).i64(9).str("p").i32(1).raw(new byte[] {5}).build());
    assertEquals(702L, decoder.changeXid());
    assertEquals(List2.of("streamStop"), List2.of(decode(streamStop())));
    assertFalse(decoder.inStreamBlock());
    // outside a block the same change has no xid
    decode(PgOutputMessages.begin(1, T1, 5));
    decode(message('I').i32(16390).i8('N').i16(3).text("8").text("y").nul().build());
    assertEquals(0L, decoder.changeXid());
  }

  @Test
  void streamCommit() {
    Object[] c =
        decode(message('c').i32(-2).i8(0).i64(0x100L).i64(0x1A8L).i64(pgMicros(T1)).build());
    assertEquals(
        List2.of("streamCommit", 0xFFFF_FFFEL, 0, PgLsn.of(0x100), PgLsn.of(0x1A8), T1),
        List2.of(c));
  }

  @Test
  void streamAbortWithAndWithoutAbortInfo() {
    Object[] a = decode(message('A').i32(10).i32(11).i64(0x200L).i64(pgMicros(T2)).build());
    assertEquals(List2.of("streamAbort", 10L, 11L, PgLsn.of(0x200), T2), List2.of(a));
    PgOutputDecoder v2 = new PgOutputDecoder(2, false);
    a = decode(v2, message('A').i32(10).i32(10).build());
    assertEquals(10L, a[1]);
    assertEquals(10L, a[2]);
    assertNull(a[3]);
    assertNull(a[4]);
    // the same message with abort info is too long for a decoder not expecting it
    CdcDecodingException e =
        assertThrows(
            CdcDecodingException.class,
            () ->
                v2.decode(
                    ByteBuffer.wrap(message('A').i32(10).i32(11).i64(1).i64(2).build()), recorder));
    assertTrue(
        e.getMessage().contains("Stream Abort ('A')") && e.getMessage().contains("offset 9"),
        e.getMessage());
  }

  @Test
  void twoPhaseMessages() {
    Object[] b =
        decode(message('b').i64(0x300L).i64(0x380L).i64(pgMicros(T1)).i32(42).str("gid-1").build());
    assertEquals(
        List2.of("beginPrepare", PgLsn.of(0x300), PgLsn.of(0x380), T1, 42L, "gid-1"), List2.of(b));
    Object[] p =
        decode(
            message('P')
                .i8(0)
                .i64(0x300L)
                .i64(0x380L)
                .i64(pgMicros(T1))
                .i32(42)
                .str("gid-1")
                .build());
    assertEquals(
        List2.of("prepare", false, 0, PgLsn.of(0x300), PgLsn.of(0x380), T1, 42L, "gid-1"),
        List2.of(p));
    Object[] sp =
        decode(
            message('p').i8(0).i64(0x300L).i64(0x380L).i64(pgMicros(T1)).i32(43).str("").build());
    assertEquals(true, sp[1]);
    assertEquals("", sp[7]);
    Object[] k =
        decode(
            message('K')
                .i8(0)
                .i64(0x400L)
                .i64(0x450L)
                .i64(pgMicros(T2))
                .i32(42)
                .str("gid-1")
                .build());
    assertEquals(
        List2.of("commitPrepared", 0, PgLsn.of(0x400), PgLsn.of(0x450), T2, 42L, "gid-1"),
        List2.of(k));
    Object[] r =
        decode(
            message('r')
                .i8(0)
                .i64(0x380L)
                .i64(0x500L)
                .i64(pgMicros(T1))
                .i64(pgMicros(T2))
                .i32(-1)
                .str("g\u00e9")
                .build());
    assertEquals(
        List2.of(
            "rollbackPrepared",
            0,
            PgLsn.of(0x380),
            PgLsn.of(0x500),
            T1,
            T2,
            0xFFFF_FFFFL,
            "g\u00e9"),
        List2.of(r));
  }

  @Test
  void messageTypesNeedTheirProtocolVersion() {
    byte[] start = streamStart(1, 1);
    byte[] beginPrepare = message('b').i64(1).i64(2).i64(3).i32(4).str("g").build();
    assertVersionError(new PgOutputDecoder(1, false), start, 2);
    assertVersionError(new PgOutputDecoder(2, false), beginPrepare, 3);
    decode(new PgOutputDecoder(2, false), start);
    decode(new PgOutputDecoder(3, false), beginPrepare);
  }

  private void assertVersionError(PgOutputDecoder d, byte[] message, int needed) {
    CdcDecodingException e =
        assertThrows(
            CdcDecodingException.class, () -> d.decode(ByteBuffer.wrap(message), recorder));
    assertTrue(e.getMessage().contains("version " + needed + " or later"), e.getMessage());
  }

  @Test
  void blockStructureIsChecked() {
    String m = failure(streamStop());
    assertTrue(m.contains("Stream Stop ('E')") && m.contains("outside a stream block"), m);
    m = failure(message('S').i32(3).i8(2).build());
    assertTrue(m.contains("first-segment flag") && m.contains("offset 5"), m);
    decode(streamStart(1, 1));
    for (byte[] notInBlock :
        new byte[][] {
          streamStart(2, 1),
          PgOutputMessages.begin(1, T1, 1),
          PgOutputMessages.commit(0, 1, 2, T1),
          message('c').i32(1).i8(0).i64(1).i64(2).i64(3).build(),
          message('K').i8(0).i64(1).i64(2).i64(3).i32(4).str("g").build()
        }) {
      m = failure(notInBlock);
      assertTrue(m.contains("inside a stream block") && m.contains("offset 0"), m);
    }
    assertTrue(decoder.inStreamBlock(), "a refused message changes no state");
  }

  static Stream<Arguments> validMessages() {
    return Stream.of(
        Arguments.of("Stream Start ('S')", streamStart(5, 0)),
        Arguments.of("Stream Commit ('c')", message('c').i32(5).i8(0).i64(1).i64(2).i64(3).build()),
        Arguments.of("Stream Abort ('A')", message('A').i32(5).i32(6).i64(1).i64(2).build()),
        Arguments.of(
            "Begin Prepare ('b')", message('b').i64(1).i64(2).i64(3).i32(4).str("g").build()),
        Arguments.of(
            "Prepare ('P')", message('P').i8(0).i64(1).i64(2).i64(3).i32(4).str("g").build()),
        Arguments.of(
            "Stream Prepare ('p')",
            message('p').i8(0).i64(1).i64(2).i64(3).i32(4).str("g").build()),
        Arguments.of(
            "Commit Prepared ('K')",
            message('K').i8(0).i64(1).i64(2).i64(3).i32(4).str("g").build()),
        Arguments.of(
            "Rollback Prepared ('r')",
            message('r').i8(0).i64(1).i64(2).i64(3).i64(4).i32(5).str("g").build()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("validMessages")
  void everyTruncatedCopyAndTrailingGarbageThrowNamingTypeAndOffset(String name, byte[] message) {
    decode(message);
    if (decoder.inStreamBlock()) {
      decode(streamStop()); // so that Stream Start can be decoded again
    }
    for (int length = 1; length < message.length; length++) {
      String m = failure(Arrays.copyOf(message, length));
      assertTrue(m.contains(name) && m.contains("offset"), m);
    }
    String m = failure(Arrays.copyOf(message, message.length + 1));
    assertTrue(m.contains(name) && m.contains("offset " + message.length), m);
  }

  @Test
  void streamedChangesTruncatedAnywhereThrow() {
    decode(PgOutputMessages.ordersRelation());
    decode(streamStart(5, 1));
    byte[] insert = streamedInsert(5, "1");
    for (int length = 1; length < insert.length; length++) {
      String m = failure(Arrays.copyOf(insert, length));
      assertTrue(m.contains("Insert ('I')") && m.contains("offset"), m);
    }
    decode(insert);
  }

  @Test
  void replayedChangeUsesTheRecordedRelationNotTheCache() {
    RelationInfo old = (RelationInfo) decode(PgOutputMessages.ordersRelation())[1];
    byte[] insert = message('I').i32(16390).i8('N').i16(3).text("1").text("a").nul().build();
    // the cache moves on: the table got a fourth column
    decode(
        message('R')
            .i32(16390)
            .str("public")
            .str("orders")
            .i8('d')
            .i16(4)
            .column(true, "id", 23, -1)
            .column(false, "note", 25, -1)
            .column(false, "amount", 1700, -1)
            .column(false, "extra", 25, -1)
            .build());
    Object[] replayed = replay(insert, false, old);
    assertSame(old, replayed[1]);
    assertEquals("a", ((Row) replayed[2]).get("note"));
    // the live cache would refuse the 3-column tuple
    assertTrue(failure(insert).contains("tuple has 3 columns"));
    // streamed: the [xid] is skipped and reported
    Object[] streamed = replay(streamedInsert(77, "2"), true, old);
    assertEquals(2, ((Row) streamed[2]).get("id"));
    assertFalse(decoder.inStreamBlock(), "replay leaves the block state as it was");
    CdcDecodingException e =
        assertThrows(
            CdcDecodingException.class,
            () -> replay(message('I').i32(999).i8('N').i16(0).build(), false, old));
    assertTrue(e.getMessage().contains("differs from the one recorded"), e.getMessage());
    e =
        assertThrows(
            CdcDecodingException.class, () -> replay(PgOutputMessages.begin(1, T1, 1), false, old));
    assertTrue(e.getMessage().contains("not a change"), e.getMessage());
  }

  private Object[] replay(byte[] message, boolean hasXid, RelationInfo... relations) {
    int before = recorder.calls.size();
    decoder.decodeChange(ByteBuffer.wrap(message), hasXid, relations, recorder);
    assertEquals(before + 1, recorder.calls.size());
    return recorder.last();
  }

  private String failure(byte[] message) {
    int before = recorder.calls.size();
    try {
      decoder.decode(ByteBuffer.wrap(message), recorder);
    } catch (CdcDecodingException e) {
      assertEquals(before, recorder.calls.size(), "no listener call for a refused message");
      return e.getMessage();
    } catch (RuntimeException e) {
      fail("expected CdcDecodingException for " + Arrays.toString(message) + " but got " + e, e);
    }
    return fail("no exception for " + Arrays.toString(message));
  }

  /** Array equality with readable failures. */
  private static final class List2 {
    static List<Object> of(Object... values) {
      return Arrays.asList(values);
    }
  }

  @Test
  void contentOfAStreamedMessageIsCopied() {
    decode(streamStart(5, 1));
    Object[] m =
        decode(
            message('M').i32(5).i8(1).i64(9).str("pre").i32(3).raw(new byte[] {1, 2, 3}).build());
    assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) m[4]);
  }
}
