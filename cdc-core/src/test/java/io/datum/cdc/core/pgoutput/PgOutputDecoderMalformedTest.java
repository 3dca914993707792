package io.datum.cdc.core.pgoutput;

import static io.datum.cdc.core.pgoutput.PgOutputMessages.message;
import static io.datum.cdc.core.pgoutput.PgOutputMessages.ordersRelation;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.datum.cdc.CdcDecodingException;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Truncated, malformed and unknown messages raise CdcDecodingException naming type and offset. */
class PgOutputDecoderMalformedTest {

  private static final Instant T = Instant.parse("2026-11-30T10:18:40Z");

  private PgOutputDecoder decoder;
  private PgOutputDecoderTest.Recorder recorder;

  @BeforeEach
  void setUp() {
    decoder = new PgOutputDecoder();
    recorder = new PgOutputDecoderTest.Recorder(decoder);
    decoder.decode(ByteBuffer.wrap(ordersRelation()), recorder);
    recorder.calls.clear();
  }

  /** Every valid message kind, each decodable after {@link #setUp}. */
  static Stream<Arguments> validMessages() {
    return Stream.of(
        Arguments.of("Begin ('B')", PgOutputMessages.begin(0x16B3748L, T, -16)),
        Arguments.of("Commit ('C')", PgOutputMessages.commit(0, 1, 2, T)),
        Arguments.of("Origin ('O')", message('O').i64(9).str("node").build()),
        Arguments.of("Relation ('R')", ordersRelation()),
        Arguments.of("Type ('Y')", message('Y').i32(50000).str("public").str("mood").build()),
        Arguments.of(
            "Insert ('I')",
            message('I').i32(16390).i8('N').i16(3).text("1").unchanged().nul().build()),
        Arguments.of(
            "Update ('U')",
            message('U')
                .i32(16390)
                .i8('K')
                .i16(3)
                .text("1")
                .nul()
                .nul()
                .i8('N')
                .i16(3)
                .text("2")
                .text("x")
                .text("1.50")
                .build()),
        Arguments.of(
            "Update ('U')",
            message('U')
                .i32(16390)
                .i8('O')
                .i16(3)
                .text("1")
                .text("a")
                .nul()
                .i8('N')
                .i16(3)
                .text("1")
                .unchanged()
                .nul()
                .build()),
        Arguments.of(
            "Delete ('D')",
            message('D').i32(16390).i8('O').i16(3).text("1").text("a").text("3").build()),
        Arguments.of("Truncate ('T')", message('T').i32(1).i8(3).i32(16390).build()),
        Arguments.of(
            "Message ('M')",
            message('M').i8(1).i64(5).str("p").i32(2).raw(new byte[] {7, 8}).build()));
  }

  @ParameterizedTest(name = "{0} #{index}")
  @MethodSource("validMessages")
  void everyValidMessageDecodes(String name, byte[] message) {
    decoder.decode(ByteBuffer.wrap(message), recorder);
    assertEquals(1, recorder.calls.size());
  }

  @ParameterizedTest(name = "{0} #{index}")
  @MethodSource("validMessages")
  void everyTruncatedCopyThrows(String name, byte[] message) {
    for (int length = 0; length < message.length; length++) {
      byte[] prefix = Arrays.copyOf(message, length);
      CdcDecodingException e = decodeFails(prefix);
      if (length > 0) {
        assertTrue(e.getMessage().contains(name), e.getMessage());
      }
      assertTrue(e.getMessage().contains("offset"), e.getMessage());
    }
    assertTrue(recorder.calls.isEmpty(), "no listener call for a broken message");
  }

  @ParameterizedTest(name = "{0} #{index}")
  @MethodSource("validMessages")
  void trailingGarbageThrows(String name, byte[] message) {
    byte[] longer = Arrays.copyOf(message, message.length + 1);
    CdcDecodingException e = decodeFails(longer);
    assertTrue(e.getMessage().contains(name), e.getMessage());
    assertTrue(e.getMessage().contains("offset " + message.length), e.getMessage());
    assertTrue(recorder.calls.isEmpty());
  }

  private CdcDecodingException decodeFails(byte[] message) {
    try {
      decoder.decode(ByteBuffer.wrap(message), recorder);
    } catch (CdcDecodingException e) {
      return e;
    } catch (RuntimeException e) {
      fail("expected CdcDecodingException for " + Arrays.toString(message) + " but got " + e, e);
    }
    return fail("no exception for " + Arrays.toString(message));
  }

  private String failure(byte[] message) {
    return decodeFails(message).getMessage();
  }

  @Test
  void unknownMessageTypes() {
    String m = failure(message('Z').i32(1).build());
    assertTrue(m.contains("'Z'") && m.contains("unknown") && m.contains("offset 0"), m);
    m = failure(new byte[] {(byte) 0xFF});
    assertTrue(m.contains("0xFF"), m);
    m = failure(message('S').i32(1).i8(1).build());
    assertTrue(m.contains("Stream Start ('S')") && m.contains("version 2"), m);
    for (char c : "EcAbPKrp".toCharArray()) {
      String text = failure(message(c).i64(0).build());
      assertTrue(text.contains("version " + ("EcA".indexOf(c) >= 0 ? 2 : 3)), text);
    }
  }

  @Test
  void unknownRelationOid() {
    for (byte[] m :
        new byte[][] {
          message('I').i32(999).i8('N').i16(0).build(),
          message('U').i32(999).i8('N').i16(0).build(),
          message('D').i32(999).i8('K').i16(0).build(),
          message('T').i32(2).i8(0).i32(16390).i32(999).build(),
          message('I').i32(-2).i8('N').i16(0).build()
        }) {
      String text = failure(m);
      assertTrue(text.contains("relation oid " + (m[1] == -1 ? "4294967294" : "999")), text);
    }
  }

  @Test
  void columnCountMismatch() {
    String m = failure(message('I').i32(16390).i8('N').i16(2).text("1").nul().build());
    assertTrue(m.contains("Insert ('I')") && m.contains("offset 6") && m.contains("2 columns"), m);
  }

  @Test
  void negativeValueLength() {
    String m = failure(message('I').i32(16390).i8('N').i16(3).i8('t').i32(-1).build());
    assertTrue(m.contains("negative length -1") && m.contains("offset 9"), m);
  }

  @Test
  void unknownTupleKind() {
    String m = failure(message('I').i32(16390).i8('N').i16(3).i8('x').build());
    assertTrue(m.contains("'x'") && m.contains("\"id\"") && m.contains("offset 8"), m);
  }

  @Test
  void binaryValueThatDoesNotDecodeNamesColumnTypeAndOffset() {
    String m =
        failure(
            message('I')
                .i32(16390)
                .i8('N')
                .i16(3)
                .binary(new byte[] {0, 0, 1})
                .nul()
                .nul()
                .build());
    assertTrue(
        m.contains("Insert ('I') message, offset 13")
            && m.contains("column \"id\" of public.orders (oid 16390)")
            && m.contains("binary value 0x000001 (3 bytes) as type oid 23")
            && m.contains("must be 4 bytes, got 3"),
        m);
    m = failure(message('I').i32(16390).i8('N').i16(3).i8('b').i32(9).i8(65).build());
    assertTrue(m.contains("truncated") && m.contains("\"id\""), m);
  }

  @Test
  void wrongTupleMarkers() {
    String m = failure(message('I').i32(16390).i8('K').i16(3).text("1").nul().nul().build());
    assertTrue(m.contains("expected 'N'") && m.contains("offset 5"), m);
    m = failure(message('D').i32(16390).i8('N').i16(3).text("1").nul().nul().build());
    assertTrue(m.contains("'K' or 'O'"), m);
    m =
        failure(
            message('U')
                .i32(16390)
                .i8('K')
                .i16(3)
                .text("1")
                .nul()
                .nul()
                .i8('K')
                .i16(3)
                .text("1")
                .nul()
                .nul()
                .build());
    assertTrue(m.contains("Update ('U')") && m.contains("expected 'N'"), m);
  }

  @Test
  void missingNulTerminator() {
    byte[] m = message('O').i64(1).build();
    m = Arrays.copyOf(m, m.length + 3);
    m[m.length - 3] = 'a';
    m[m.length - 2] = 'b';
    m[m.length - 1] = 'c';
    String text = failure(m);
    assertTrue(text.contains("NUL") && text.contains("offset 9"), text);
  }

  @Test
  void badReplicaIdentity() {
    String m = failure(message('R').i32(1).str("s").str("t").i8('x').i16(0).build());
    assertTrue(m.contains("replica identity"), m);
  }

  @Test
  void negativeCounts() {
    assertTrue(failure(message('T').i32(-1).i8(0).build()).contains("negative"));
    assertTrue(failure(message('M').i8(0).i64(1).str("p").i32(-5).build()).contains("negative"));
  }

  @Test
  void valueThatDoesNotParseNamesColumnTypeAndText() {
    String m = failure(message('I').i32(16390).i8('N').i16(3).text("abc").nul().nul().build());
    assertTrue(m.contains("Insert ('I')"), m);
    assertTrue(m.contains("offset 13"), m);
    assertTrue(m.contains("\"id\""), m);
    assertTrue(m.contains("type oid 23"), m);
    assertTrue(m.contains("\"abc\""), m);
    String longText = "9".repeat(500);
    m =
        failure(
            message('I').i32(16390).i8('N').i16(3).text("1").nul().text(longText + "x").build());
    assertTrue(m.contains("type oid 1700") && m.length() < 400, m);
  }

  @Test
  void emptyMessage() {
    assertThrows(
        CdcDecodingException.class, () -> decoder.decode(ByteBuffer.allocate(0), recorder));
  }
}
