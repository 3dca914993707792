package io.datum.cdc.core.types;

import static io.datum.cdc.core.pgoutput.PgOutputMessages.message;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcDecodingException;
import io.datum.cdc.core.pgoutput.PgOutputDecoder;
import io.datum.cdc.core.pgoutput.PgOutputDecoderTest;
import io.datum.cdc.event.Row;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link PgBinaryCodec}s on crafted bytes (formats: range_send, multirange_send, record_send,
 * array_send, enum_send), malformed input, and their use by {@link PgOutputDecoder} through a
 * {@link PgBinaryTypes} at Relation time.
 */
class PgBinaryCodecTest {

  private static final int MOOD = 50000;
  private static final int MOOD_ARRAY = 50001;
  private static final int INT4RANGE = 3904;
  private static final int INT4MULTIRANGE = 4451;
  private static final int PAIR = 50002;
  private static final int POSINT = 50003;

  private static final PgBinaryCodec INT4 = new PgBinaryCodec.Builtin(23, "int4", null);
  private static final PgBinaryCodec TEXT = new PgBinaryCodec.Builtin(25, "text", null);
  private static final PgBinaryCodec ENUM = new PgBinaryCodec.EnumType(MOOD, "public.mood");
  private static final PgBinaryCodec RANGE = new PgBinaryCodec.Range(INT4RANGE, "int4range", INT4);
  private static final PgBinaryCodec MULTI =
      new PgBinaryCodec.Multirange(INT4MULTIRANGE, "int4multirange", RANGE);
  private static final PgBinaryCodec DOMAIN = new PgBinaryCodec.Domain(POSINT, "posint", INT4);
  private static final PgBinaryCodec PAIR_CODEC =
      new PgBinaryCodec.Composite(
          PAIR,
          "public.pair",
          new int[] {23, 25},
          new PgBinaryCodec[] {INT4, TEXT},
          oid ->
              oid == MOOD
                  ? ENUM
                  : new PgBinaryCodec.Unsupported(oid, "type", "unknown in this test"));

  private static byte[] int4(int v) {
    return SendBytes.of().i32(v).build();
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Object value(PgBinaryCodec codec, byte[] b) {
    return codec.value(b, 0, b.length);
  }

  private static String rejected(PgBinaryCodec codec, byte[] b) {
    return assertThrows(IllegalArgumentException.class, () -> value(codec, b)).getMessage();
  }

  /** range_send: flags, then length-prefixed bounds that exist. */
  private static byte[] range(int flags, Integer lower, Integer upper) {
    SendBytes b = SendBytes.of().i8(flags);
    if (lower != null) {
      b.i32(4).i32(lower);
    }
    if (upper != null) {
      b.i32(4).i32(upper);
    }
    return b.build();
  }

  @Test
  void enumsAndDomains() {
    assertEquals("très bien", value(ENUM, utf8("très bien")));
    assertEquals("", value(ENUM, new byte[0]));
    assertEquals(7, value(DOMAIN, int4(7)));
    assertEquals(7, value(new PgBinaryCodec.Domain(1, "d2", DOMAIN), int4(7)));
    assertEquals(23, new PgBinaryCodec.Domain(1, "d2", DOMAIN).baseOid());
  }

  @Test
  void rangesAsRangeOutPrintsThem() {
    int lbInc = PgBinaryCodec.Range.LB_INC;
    assertEquals("[1,10)", value(RANGE, range(lbInc, 1, 10)));
    assertEquals("empty", value(RANGE, range(PgBinaryCodec.Range.EMPTY, null, null)));
    assertEquals(
        "(,5]",
        value(RANGE, range(PgBinaryCodec.Range.LB_INF | PgBinaryCodec.Range.UB_INC, null, 5)));
    assertEquals("[-3,)", value(RANGE, range(lbInc | PgBinaryCodec.Range.UB_INF, -3, null)));
    assertEquals(
        "(,)",
        value(RANGE, range(PgBinaryCodec.Range.LB_INF | PgBinaryCodec.Range.UB_INF, null, null)));
    PgBinaryCodec textRange = new PgBinaryCodec.Range(1, "textrange", TEXT);
    byte[] quoted = SendBytes.of().i8(lbInc).i32(3).text("a b").i32(4).text("c\"\\d").build();
    assertEquals("[\"a b\",\"c\"\"\\\\d\")", value(textRange, quoted));
    byte[] empty = SendBytes.of().i8(lbInc).i32(0).i32(1).text("z").build();
    assertEquals("[\"\",z)", value(textRange, empty));
  }

  @Test
  void multirangesAsMultirangeOutPrintsThem() {
    byte[] two =
        SendBytes.of()
            .i32(2) // each range: flags byte and two 4-byte bounds with lengths
            .i32(17)
            .raw(range(2, 1, 3))
            .i32(17)
            .raw(range(2, 5, 7))
            .build();
    assertEquals("{[1,3),[5,7)}", value(MULTI, two));
    assertEquals("{}", value(MULTI, int4(0)));
  }

  @Test
  void compositesAsRecordOutPrintsThem() {
    byte[] pair =
        SendBytes.of()
            .i32(2)
            .i32(23)
            .i32(4)
            .i32(1)
            .i32(25)
            .i32(17)
            .text("a \"q\", (p) \\ back")
            .build();
    assertEquals("(1,\"a \"\"q\"\", (p) \\\\ back\")", value(PAIR_CODEC, pair));
    byte[] nulls = SendBytes.of().i32(2).i32(23).i32(-1).i32(25).i32(0).build();
    assertEquals("(,\"\")", value(PAIR_CODEC, nulls));
    // a field type the cached attribute list does not hold comes from the resolver
    byte[] altered =
        SendBytes.of()
            .i32(3)
            .i32(23)
            .i32(4)
            .i32(1)
            .i32(25)
            .i32(1)
            .text("x")
            .i32(MOOD)
            .i32(2)
            .text("ok")
            .build();
    assertEquals("(1,x,ok)", value(PAIR_CODEC, altered));
    assertEquals("()", value(PAIR_CODEC, int4(0)));
  }

  private static String text(PgBinaryCodec codec, byte[] b) {
    return codec.text(new PgBinaryCursor(b, 0, b.length));
  }

  @Test
  void arraysOfUserTypesAreListsOfTheElementValuesAndRenderAsArrayOut() {
    PgBinaryCodec moods = new PgBinaryCodec.ArrayOf(MOOD_ARRAY, "public._mood", ENUM);
    byte[] array =
        SendBytes.of()
            .arrayHeader(1, MOOD, 4, 1)
            .element(utf8("ok"))
            .i32(-1)
            .element(utf8("a,b"))
            .element(utf8(""))
            .build();
    assertEquals(Arrays.asList("ok", null, "a,b", ""), value(moods, array));
    assertEquals("{ok,NULL,\"a,b\",\"\"}", text(moods, array));
    assertEquals(Arrays.asList("ok", null, "a,b", ""), moods.textValue(text(moods, array)));
    PgBinaryCodec pairs = new PgBinaryCodec.ArrayOf(1, "public._pair", PAIR_CODEC);
    byte[] pair = SendBytes.of().i32(2).i32(23).i32(4).i32(1).i32(25).i32(3).text("x y").build();
    byte[] pairArray = SendBytes.of().arrayHeader(0, PAIR, 1, 1).element(pair).build();
    assertEquals(List.of("(1,\"x y\")"), value(pairs, pairArray));
    assertEquals("{\"(1,\\\"x y\\\")\"}", text(pairs, pairArray));
    // an array of a domain may carry the domain's oid or its base type's; its elements are the
    // base type's values
    PgBinaryCodec posints = new PgBinaryCodec.ArrayOf(2, "public._posint", DOMAIN);
    assertEquals(
        List.of(5),
        value(posints, SendBytes.of().arrayHeader(0, 23, 1, 1).element(int4(5)).build()));
    assertEquals(
        List.of(5),
        value(posints, SendBytes.of().arrayHeader(0, POSINT, 1, 1).element(int4(5)).build()));
    assertEquals(List.of(List.of(5), List.of(6)), posints.textValue("{{5},{6}}"));
  }

  @Test
  void anArrayTypeNoLongerInTheCatalogDecodesItsElementsAsAColumnOfTheirTypeWould() {
    // the element type is gone too: its values decode by the rule of a column of that type (a
    // record, or an enum label outside pg_catalog); an array's text does not name its element type
    PgBinaryCodec gone = new PgBinaryCodec.Unidentified(MOOD, "public.mood", oid -> INT4, true);
    PgBinaryCodec sent =
        new PgBinaryCodec.SentArray(MOOD_ARRAY, "public._mood", oid -> oid == 23 ? INT4 : gone);
    byte[] ints = SendBytes.of().arrayHeader(1, 23, 2, 1).element(int4(7)).i32(-1).build();
    assertEquals(Arrays.asList(7, null), value(sent, ints));
    byte[] moods = SendBytes.of().arrayHeader(1, MOOD, 2, 1).element(utf8("ok")).i32(-1).build();
    assertEquals(Arrays.asList("ok", null), value(sent, moods));
    // an element value that is neither a record nor a label fails, naming the element type
    byte[] notLabels = SendBytes.of().arrayHeader(0, MOOD, 1, 1).element(int4(7)).build();
    assertTrue(rejected(sent, notLabels).contains("oid " + MOOD + ")"), rejected(sent, notLabels));
    assertTrue(rejected(sent, notLabels).contains("not a record"), rejected(sent, notLabels));
    assertTrue(rejected(sent, new byte[] {0, 0}).contains("no array header"));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> sent.textValue("{ok,NULL}"));
    assertTrue(e.getMessage().contains("public._mood"), e.getMessage());
  }

  @Test
  void aTypeNoLongerInTheCatalogDecodesOnlyAsARecordOrAnEnumLabel() {
    PgBinaryCodec unknown =
        new PgBinaryCodec.Unsupported(99, "type", "it is neither builtin nor known");
    PgBinaryCodec scalar =
        new PgBinaryCodec.Unidentified(
            MOOD, "public.gone", oid -> oid == 23 || oid == 25 ? builtin(oid) : unknown, true);
    byte[] record = SendBytes.of().i32(2).i32(23).i32(4).i32(1).i32(25).i32(3).text("x y").build();
    assertEquals("(1,\"x y\")", value(scalar, record));
    assertEquals("très bien", value(scalar, utf8("très bien")));
    assertEquals("", value(scalar, new byte[0]));
    // a record naming a field type that is neither builtin nor known is not taken as one
    byte[] foreign = SendBytes.of().i32(1).i32(99).i32(4).i32(1).build();
    assertTrue(rejected(scalar, foreign).contains("public.gone (oid " + MOOD + ")"));
    // range_send's forms: a control-character flags byte, NUL bytes in the lengths
    assertTrue(rejected(scalar, new byte[] {0x01}).contains("nor an enum label"));
    assertTrue(rejected(scalar, new byte[] {0x18}).contains("nor an enum label"));
    assertTrue(rejected(scalar, range(0x02, 1, 5)).contains("not a record"));
    assertTrue(rejected(scalar, utf8("x".repeat(64))).contains("nor an enum label"));
    assertTrue(rejected(scalar, new byte[] {(byte) 0xC3, 0x28}).contains("nor an enum label"));
    // where the Type message named a pg_catalog type, a label is never guessed
    PgBinaryCodec noLabels = new PgBinaryCodec.Unidentified(MOOD, "gone", oid -> unknown, false);
    assertTrue(rejected(noLabels, utf8("ok")).contains("is not a record"));
    assertEquals("x", noLabels.textValue("x"));
  }

  private static PgBinaryCodec builtin(int oid) {
    return new PgBinaryCodec.Builtin(oid, oid == 23 ? "int4" : "text", null);
  }

  @Test
  void timestamptzTextNeedsTheSessionZone() {
    PgBinaryCodec noZone =
        new PgBinaryCodec.Range(
            3910, "tstzrange", new PgBinaryCodec.Builtin(1184, "timestamptz", null));
    byte[] lower = SendBytes.of().i8(2 | PgBinaryCodec.Range.UB_INF).i32(8).i64(0).build();
    assertTrue(rejected(noZone, lower).contains("TimeZone"));
    byte[] infinite =
        SendBytes.of().i8(2 | PgBinaryCodec.Range.UB_INF).i32(8).i64(Long.MAX_VALUE).build();
    assertEquals("[infinity,)", value(noZone, infinite));
    PgBinaryCodec amsterdam =
        new PgBinaryCodec.Builtin(1184, "timestamptz", ZoneId.of("Europe/Amsterdam"));
    PgBinaryCodec range = new PgBinaryCodec.Range(3910, "tstzrange", amsterdam);
    byte[] r = SendBytes.of().i8(2).i32(8).i64(0).i32(8).i64(86_400_000_000L * 182).build();
    assertEquals("[\"2000-01-01 01:00:00+01\",\"2000-07-01 02:00:00+02\")", value(range, r));
  }

  @Test
  void malformedValuesAreRejectedClearly() {
    assertTrue(rejected(RANGE, new byte[0]).contains("range flags"));
    assertTrue(rejected(RANGE, SendBytes.of().i8(2).i32(4).build()).contains("lower bound"));
    assertTrue(rejected(RANGE, SendBytes.of().i8(2).i32(-5).build()).contains("negative length"));
    assertTrue(
        rejected(RANGE, SendBytes.of().i8(2).i32(3).raw(new byte[3]).i32(4).i32(1).build())
            .contains("must be 4 bytes"));
    assertTrue(
        rejected(RANGE, SendBytes.of().raw(range(2, 1, 2)).i8(0).build()).contains("trailing"));
    assertTrue(rejected(RANGE, SendBytes.of().i8(1).i8(0).build()).contains("trailing"));
    assertTrue(rejected(MULTI, int4(Integer.MAX_VALUE)).contains("does not fit"));
    assertTrue(rejected(MULTI, int4(-1)).contains("does not fit"));
    assertTrue(
        rejected(MULTI, SendBytes.of().i32(1).i32(100).raw(range(2, 1, 2)).build())
            .contains("multirange range 1"));
    assertTrue(
        rejected(MULTI, SendBytes.of().i32(1).i32(17).raw(range(2, 1, 2)).i8(7).build())
            .contains("trailing"));
    assertTrue(rejected(PAIR_CODEC, int4(1_000_000)).contains("does not fit"));
    assertTrue(
        rejected(PAIR_CODEC, SendBytes.of().i32(1).i32(23).i32(400).i32(1).build())
            .contains("composite field 1"));
    assertTrue(
        rejected(PAIR_CODEC, SendBytes.of().i32(1).i32(23).i32(2).i16(1).build())
            .contains("field 1 of type int4"));
    String unknown = rejected(PAIR_CODEC, SendBytes.of().i32(1).i32(777).i32(1).i8(1).build());
    assertTrue(
        unknown.contains("type (oid 777)") && unknown.contains("unknown in this test"), unknown);
    assertTrue(rejected(PAIR_CODEC, SendBytes.of().i32(0).i8(1).build()).contains("trailing"));
    PgBinaryCodec moods = new PgBinaryCodec.ArrayOf(MOOD_ARRAY, "public._mood", ENUM);
    assertTrue(
        rejected(moods, SendBytes.of().arrayHeader(0, 25, 1, 1).element(utf8("x")).build())
            .contains("element type oid is 25"));
    assertTrue(
        rejected(moods, SendBytes.of().arrayHeader(0, MOOD, 1000, 1).build()).contains("claims"));
    String unsupported =
        rejected(new PgBinaryCodec.Unsupported(9, "public.hstore", "its own format"), int4(1));
    assertTrue(
        unsupported.contains("public.hstore (oid 9)") && unsupported.contains("its own"),
        unsupported);
  }

  @Test
  void randomBytesNeverRaiseAnythingButIllegalArgumentException() {
    Random random = new Random(42);
    PgBinaryCodec[] codecs = {
      RANGE,
      MULTI,
      PAIR_CODEC,
      new PgBinaryCodec.ArrayOf(MOOD_ARRAY, "public._mood", ENUM),
      new PgBinaryCodec.ArrayOf(1, "public._pair", PAIR_CODEC),
      new PgBinaryCodec.Range(
          3910, "tstzrange", new PgBinaryCodec.Builtin(1184, "timestamptz", ZoneId.of("UTC")))
    };
    int decoded = 0;
    for (int i = 0; i < 20_000; i++) {
      byte[] b = new byte[random.nextInt(40)];
      random.nextBytes(b);
      if (b.length > 4 && random.nextBoolean()) {
        b[0] = 0; // small counts and lengths, so that some values get deep into the formats
        b[1] = 0;
        b[2] = 0;
        b[3] = (byte) random.nextInt(3);
      }
      PgBinaryCodec codec = codecs[i % codecs.length];
      try {
        value(codec, b);
        decoded++;
      } catch (IllegalArgumentException expected) {
        // malformed: the only acceptable failure
      } catch (RuntimeException e) {
        throw new AssertionError(codec.describe() + " on " + HexFormat.of().formatHex(b), e);
      }
    }
    assertTrue(decoded > 0, "some random values are valid");
  }

  // ---- through the decoder ----------------------------------------------------------------

  /** A PgBinaryTypes that knows the types above and counts its calls. */
  private static final class FakeTypes implements PgBinaryTypes {
    final List<int[]> prepared = new ArrayList<>();
    int codecCalls;

    @Override
    public void prepare(int[] typeOids) {
      prepared.add(typeOids.clone());
    }

    @Override
    public PgBinaryCodec codec(int typeOid) {
      codecCalls++;
      return switch (typeOid) {
        case MOOD -> ENUM;
        case INT4RANGE -> RANGE;
        case PAIR -> PAIR_CODEC;
        default -> new PgBinaryCodec.Unsupported(typeOid, "public.ext", "its own format");
      };
    }
  }

  @Test
  void theDecoderResolvesCodecsOncePerRelationMessageNotPerRow() {
    FakeTypes types = new FakeTypes();
    PgOutputDecoder decoder = new PgOutputDecoder(1, false, types);
    PgOutputDecoderTest.Recorder recorder = new PgOutputDecoderTest.Recorder(decoder);
    decoder.decode(
        ByteBuffer.wrap(message('Y').i32(MOOD).str("public").str("mood").build()), recorder);
    decoder.decode(
        ByteBuffer.wrap(
            message('R')
                .i32(16400)
                .str("public")
                .str("t")
                .i8('d')
                .i16(5)
                .column(true, "id", 23, -1)
                .column(false, "m", MOOD, -1)
                .column(false, "r", INT4RANGE, -1)
                .column(false, "p", PAIR, -1)
                .column(false, "x", 60000, -1)
                .build()),
        recorder);
    assertEquals(1, types.prepared.size());
    assertEquals(
        List.of(MOOD, INT4RANGE, PAIR, 60000),
        Arrays.stream(types.prepared.get(0)).boxed().toList());
    int calls = types.codecCalls;
    byte[] pair = SendBytes.of().i32(2).i32(23).i32(4).i32(1).i32(25).i32(1).text("x").build();
    for (int id = 1; id <= 3; id++) {
      decoder.decode(
          ByteBuffer.wrap(
              message('I')
                  .i32(16400)
                  .i8('N')
                  .i16(5)
                  .binary(int4(id))
                  .binary(utf8("ok"))
                  .binary(range(2, 1, 5))
                  .binary(pair)
                  .nul()
                  .build()),
          recorder);
      Row row = (Row) recorder.last()[2];
      assertEquals(id, row.get("id"));
      assertEquals("ok", row.get("m"));
      assertEquals("[1,5)", row.get("r"));
      assertEquals("(1,x)", row.get("p"));
    }
    assertEquals(calls, types.codecCalls, "no codec look-up per row");
    assertEquals(1, types.prepared.size(), "no catalog preparation per row");
    CdcDecodingException e =
        assertThrows(
            CdcDecodingException.class,
            () ->
                decoder.decode(
                    ByteBuffer.wrap(
                        message('I')
                            .i32(16400)
                            .i8('N')
                            .i16(5)
                            .binary(int4(4))
                            .nul()
                            .nul()
                            .nul()
                            .binary(utf8("v"))
                            .build()),
                    recorder));
    String m = e.getMessage();
    assertTrue(m.contains("column \"x\" of public.t (oid 16400)"), m);
    assertTrue(m.contains("as type public.ext (oid 60000)"), m);
    assertTrue(m.contains("its own format"), m);
    assertInstanceOf(IllegalArgumentException.class, e.getCause());
    CdcDecodingException bad =
        assertThrows(
            CdcDecodingException.class,
            () ->
                decoder.decode(
                    ByteBuffer.wrap(
                        message('I')
                            .i32(16400)
                            .i8('N')
                            .i16(5)
                            .binary(int4(5))
                            .nul()
                            .binary(new byte[] {2, 0, 0})
                            .nul()
                            .nul()
                            .build()),
                    recorder));
    assertTrue(
        bad.getMessage().contains("column \"r\"")
            && bad.getMessage().contains("int4range (oid 3904)"),
        bad.getMessage());
  }

  @Test
  void aTextModeDecoderAttachesNoCodecs() {
    PgOutputDecoder decoder = new PgOutputDecoder(1, false);
    PgOutputDecoderTest.Recorder recorder = new PgOutputDecoderTest.Recorder(decoder);
    decoder.decode(
        ByteBuffer.wrap(
            message('R')
                .i32(16400)
                .str("public")
                .str("t")
                .i8('d')
                .i16(2)
                .column(true, "id", 23, -1)
                .column(false, "m", MOOD, -1)
                .build()),
        recorder);
    assertEquals(null, decoder.relation(16400).binaryCodecs());
    decoder.decode(
        ByteBuffer.wrap(message('I').i32(16400).i8('N').i16(2).text("1").text("ok").build()),
        recorder);
    assertEquals("ok", ((Row) recorder.last()[2]).get("m"));
  }

  @Test
  void aCatalogFailureAtRelationTimeNamesTheRelation() {
    PgBinaryTypes failing =
        new PgBinaryTypes() {
          @Override
          public void prepare(int[] typeOids) {
            throw new IllegalStateException("connection refused");
          }

          @Override
          public PgBinaryCodec codec(int typeOid) {
            throw new AssertionError("not reached");
          }
        };
    PgOutputDecoder decoder = new PgOutputDecoder(1, false, failing);
    CdcDecodingException e =
        assertThrows(
            CdcDecodingException.class,
            () ->
                decoder.decode(
                    ByteBuffer.wrap(
                        message('R')
                            .i32(16400)
                            .str("public")
                            .str("t")
                            .i8('d')
                            .i16(1)
                            .column(false, "m", MOOD, -1)
                            .build()),
                    new PgOutputDecoderTest.Recorder(decoder)));
    assertTrue(
        e.getMessage().contains("public.t (oid 16400)")
            && e.getMessage().contains("connection refused"),
        e.getMessage());
  }
}
