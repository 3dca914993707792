package io.datum.cdc.core.pgoutput;

import static io.datum.cdc.core.pgoutput.PgOutputMessages.message;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcDecodingException;
import io.datum.cdc.core.types.SendBytes;
import io.datum.cdc.event.Row;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Tuple data in binary format ({@code 'b'}, pgoutput option {@code binary}), alone and mixed with
 * {@code 't'}, {@code 'n'} and {@code 'u'} columns, through {@link PgOutputDecoder}.
 */
class PgOutputDecoderBinaryTest {

  private static final int RELATION = 16400;
  private static final int MOOD = 50000;
  private static final int QTY = 50001;

  private PgOutputDecoder decoder;
  private PgOutputDecoderTest.Recorder recorder;

  /**
   * Relation public.items: id int4 (key), note text, amount numeric, tags text[], at timestamptz,
   * mood (an enum, user type 50000), qty (a domain over int4, 50001), addr inet.
   */
  @BeforeEach
  void setUp() {
    decoder = new PgOutputDecoder();
    recorder = new PgOutputDecoderTest.Recorder(decoder);
    decode(message('Y').i32(MOOD).str("public").str("mood").build());
    decode(message('Y').i32(QTY).str("").str("int4").build()); // a domain: its base type's name
    decode(
        message('R')
            .i32(RELATION)
            .str("public")
            .str("items")
            .i8('d')
            .i16(8)
            .column(true, "id", 23, -1)
            .column(false, "note", 25, -1)
            .column(false, "amount", 1700, -1)
            .column(false, "tags", 1009, -1)
            .column(false, "at", 1184, -1)
            .column(false, "mood", MOOD, -1)
            .column(false, "qty", QTY, -1)
            .column(false, "addr", 869, -1)
            .build());
    recorder.calls.clear();
  }

  private void decode(byte[] message) {
    decoder.decode(ByteBuffer.wrap(message), recorder);
  }

  private static byte[] int4(int v) {
    return SendBytes.of().i32(v).build();
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** numeric_send of 12.340: 2 digits, weight 0, positive, dscale 3, digits 12 and 3400. */
  private static final byte[] AMOUNT =
      SendBytes.of().i16(2).i16(0).i16(0).i16(3).i16(12).i16(3400).build();

  /** array_send of {a,NULL,"b c"}::text[]. */
  private static final byte[] TAGS =
      SendBytes.of()
          .arrayHeader(1, 25, 3, 1)
          .element(utf8("a"))
          .i32(-1)
          .element(utf8("b c"))
          .build();

  /** timestamptz_send of 2026-11-30T10:18:40.5Z: microseconds since 2000-01-01. */
  private static final byte[] AT =
      SendBytes.of()
          .i64(PgOutputMessages.pgMicros(Instant.parse("2026-11-30T10:18:40.5Z")))
          .build();

  /** network_send of 10.0.0.1/8 (inet). */
  private static final byte[] ADDR =
      SendBytes.of().i8(2).i8(8).i8(0).i8(4).i8(10).i8(0).i8(0).i8(1).build();

  @Test
  void insertWithEveryColumnInBinary() {
    decode(
        message('I')
            .i32(RELATION)
            .i8('N')
            .i16(8)
            .binary(int4(7))
            .binary(utf8("héllo 😀"))
            .binary(AMOUNT)
            .binary(TAGS)
            .binary(AT)
            .nul()
            .binary(int4(3))
            .binary(ADDR)
            .build());
    Row row = (Row) recorder.only()[2];
    assertEquals(7, row.get("id"));
    assertEquals("héllo 😀", row.get("note"));
    assertEquals(new BigDecimal("12.340"), row.get("amount"));
    assertEquals(3, ((BigDecimal) row.get("amount")).scale());
    assertEquals(Arrays.asList("a", null, "b c"), row.get("tags"));
    assertEquals(Instant.parse("2026-11-30T10:18:40.5Z"), row.get("at"));
    assertNull(row.get("mood"));
    assertEquals(3, row.get("qty")); // the domain decodes as its base type int4
    assertEquals("10.0.0.1/8", row.get("addr"));
  }

  @Test
  void binaryAndTextColumnsGiveTheSameRow() {
    decode(
        message('I')
            .i32(RELATION)
            .i8('N')
            .i16(8)
            .binary(int4(7))
            .binary(utf8("x"))
            .binary(AMOUNT)
            .binary(TAGS)
            .binary(AT)
            .nul()
            .binary(int4(3))
            .binary(ADDR)
            .build());
    decode(
        message('I')
            .i32(RELATION)
            .i8('N')
            .i16(8)
            .text("7")
            .text("x")
            .text("12.340")
            .text("{a,NULL,\"b c\"}")
            .text("2026-11-30 11:18:40.5+01")
            .nul()
            .text("3")
            .text("10.0.0.1/8")
            .build());
    Row binary = (Row) recorder.calls.get(0)[2];
    Row text = (Row) recorder.calls.get(1)[2];
    assertEquals(text.toMap(), binary.toMap());
  }

  @Test
  void updateWithBinaryKeyAndMixedNewTuple() {
    decode(
        message('U')
            .i32(RELATION)
            .i8('K')
            .i16(8)
            .binary(int4(7))
            .nul()
            .nul()
            .nul()
            .nul()
            .nul()
            .nul()
            .nul()
            .i8('N')
            .i16(8)
            .text("8")
            .unchanged()
            .binary(AMOUNT)
            .text("{x}")
            .nul()
            .text("ok")
            .binary(int4(4))
            .binary(ADDR)
            .build());
    Object[] call = recorder.only();
    Row oldRow = (Row) call[2];
    Row newRow = (Row) call[4];
    assertEquals(1, oldRow.size());
    assertEquals(7, oldRow.get("id"));
    assertFalse((Boolean) call[3]);
    assertEquals(8, newRow.get("id"));
    assertTrue(newRow.isUnchangedToast(1));
    assertEquals(new BigDecimal("12.340"), newRow.get("amount"));
    assertEquals(List.of("x"), newRow.get("tags"));
    assertEquals("ok", newRow.get("mood")); // an enum in text format stays its label
    assertEquals(4, newRow.get("qty"));
  }

  @Test
  void deleteWithBinaryFullOldRow() {
    decode(
        message('D')
            .i32(RELATION)
            .i8('O')
            .i16(8)
            .binary(int4(7))
            .binary(new byte[0])
            .binary(AMOUNT)
            .binary(TAGS)
            .binary(AT)
            .nul()
            .binary(int4(3))
            .binary(ADDR)
            .build());
    Object[] call = recorder.only();
    Row old = (Row) call[2];
    assertTrue((Boolean) call[3]);
    assertEquals("", old.get("note"));
    assertEquals(Arrays.asList("a", null, "b c"), old.get("tags"));
  }

  @Test
  void byteaColumnIsCopiedOutOfTheMessage() {
    decode(
        message('R')
            .i32(1)
            .str("public")
            .str("blobs")
            .i8('d')
            .i16(1)
            .column(true, "b", 17, -1)
            .build());
    byte[] payload = {0, (byte) 0xFF, 10};
    byte[] msg = message('I').i32(1).i8('N').i16(1).binary(payload).build();
    decode(msg);
    byte[] value = (byte[]) ((Row) recorder.last()[2]).get("b");
    assertArrayEquals(payload, value);
    Arrays.fill(msg, (byte) 0);
    assertArrayEquals(payload, value, "value must not share the message buffer");
  }

  private CdcDecodingException fails(byte[] message) {
    CdcDecodingException e = assertThrows(CdcDecodingException.class, () -> decode(message));
    assertTrue(recorder.calls.isEmpty(), "no listener call for a failed message");
    return e;
  }

  /** Offset of the value bytes of the column after {@code prefix} (kind byte, then length). */
  private static int valueOffset(PgOutputMessages prefix) {
    return prefix.build().length + 1 + 4;
  }

  @Test
  void enumColumnInBinaryIsRejectedNamingColumnTypeAndOffset() {
    PgOutputMessages prefix =
        message('I').i32(RELATION).i8('N').i16(8).binary(int4(7)).nul().nul().nul().nul();
    int offset = valueOffset(prefix);
    CdcDecodingException e = fails(prefix.binary(utf8("ok")).nul().nul().build());
    String m = e.getMessage();
    assertTrue(m.contains("Insert ('I') message, offset " + offset), m);
    assertTrue(m.contains("column \"mood\" of public.items (oid 16400)"), m);
    assertTrue(m.contains("binary value 0x6f6b (2 bytes) as type oid 50000"), m);
    assertTrue(m.contains("cannot be decoded"), m);
    assertInstanceOf(IllegalArgumentException.class, e.getCause());
  }

  @Test
  void malformedDomainValueNamesTheBaseTypeItWasDecodedAs() {
    PgOutputMessages prefix =
        message('I').i32(RELATION).i8('N').i16(8).binary(int4(7)).nul().nul().nul().nul().nul();
    int offset = valueOffset(prefix);
    String m = fails(prefix.binary(new byte[] {1, 2}).nul().build()).getMessage();
    assertTrue(m.contains("offset " + offset), m);
    assertTrue(m.contains("column \"qty\""), m);
    assertTrue(m.contains("type oid 50001 (decoded as builtin type oid 23)"), m);
    assertTrue(m.contains("must be 4 bytes, got 2"), m);
  }

  @Test
  void arrayHeaderLyingAboutItsSizeIsRejected() {
    byte[] lying = SendBytes.of().arrayHeader(0, 25, 1_000_000, 1).element(utf8("a")).build();
    String m =
        fails(
                message('I')
                    .i32(RELATION)
                    .i8('N')
                    .i16(8)
                    .binary(int4(7))
                    .nul()
                    .nul()
                    .binary(lying)
                    .nul()
                    .nul()
                    .nul()
                    .nul()
                    .build())
            .getMessage();
    assertTrue(m.contains("column \"tags\"") && m.contains("claims at least 1000000"), m);
  }

  @Test
  void longValueIsShownAsAnExcerpt() {
    byte[] big = new byte[100];
    String m =
        fails(
                message('I')
                    .i32(RELATION)
                    .i8('N')
                    .i16(8)
                    .binary(big)
                    .nul()
                    .nul()
                    .nul()
                    .nul()
                    .nul()
                    .nul()
                    .nul()
                    .build())
            .getMessage();
    assertTrue(m.contains("0x" + "00".repeat(32) + "... (100 bytes)"), m);
  }
}
