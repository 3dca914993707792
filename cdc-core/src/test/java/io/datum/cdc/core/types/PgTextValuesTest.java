package io.datum.cdc.core.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.datum.cdc.CdcDecodingException;
import io.datum.cdc.event.PgInterval;
import io.datum.cdc.event.PgJson;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Text output of every supported type decodes to the Java type fixed in Row's Javadoc. */
class PgTextValuesTest {

  private static final long H = 3_600_000_000L;
  private static final long M = 60_000_000L;

  static Stream<Arguments> values() {
    return Stream.of(
        arguments(21, "32767", (short) 32767),
        arguments(21, "-32768", (short) -32768),
        arguments(23, "0", 0),
        arguments(23, "-2147483648", Integer.MIN_VALUE),
        arguments(23, "2147483647", Integer.MAX_VALUE),
        arguments(20, "9223372036854775807", Long.MAX_VALUE),
        arguments(20, "-9223372036854775808", Long.MIN_VALUE),
        arguments(26, "4294967295", 4294967295L),
        arguments(26, "0", 0L),
        arguments(700, "1.5", 1.5f),
        arguments(700, "3.4028235e+38", Float.MAX_VALUE),
        arguments(700, "1e-45", Float.MIN_VALUE),
        arguments(700, "-0", -0.0f),
        arguments(700, "NaN", Float.NaN),
        arguments(700, "Infinity", Float.POSITIVE_INFINITY),
        arguments(700, "-Infinity", Float.NEGATIVE_INFINITY),
        arguments(701, "0.1", 0.1d),
        arguments(701, "1.7976931348623157e+308", Double.MAX_VALUE),
        arguments(701, "-1.5e-300", -1.5e-300),
        arguments(701, "NaN", Double.NaN),
        arguments(701, "Infinity", Double.POSITIVE_INFINITY),
        arguments(701, "-Infinity", Double.NEGATIVE_INFINITY),
        arguments(1700, "12.340", new BigDecimal("12.340")),
        arguments(1700, "-0.001", new BigDecimal("-0.001")),
        arguments(1700, "100", new BigDecimal("100")),
        arguments(1700, "0.00000", new BigDecimal("0.00000")),
        arguments(
            1700,
            "123456789012345678901234567890.123456789",
            new BigDecimal("123456789012345678901234567890.123456789")),
        arguments(1700, "NaN", Double.NaN),
        arguments(1700, "Infinity", Double.POSITIVE_INFINITY),
        arguments(1700, "-Infinity", Double.NEGATIVE_INFINITY),
        arguments(16, "t", true),
        arguments(16, "f", false),
        arguments(25, "héllo 😀", "héllo 😀"),
        arguments(25, "", ""),
        arguments(1043, "NULL", "NULL"),
        arguments(1042, "ab  ", "ab  "),
        arguments(19, "pg_class", "pg_class"),
        arguments(18, "x", "x"),
        arguments(17, "\\x0a0b", new byte[] {10, 11}),
        arguments(17, "\\x", new byte[0]),
        arguments(
            17, "\\xDEADbeef", new byte[] {(byte) 0xDE, (byte) 0xAD, (byte) 0xBE, (byte) 0xEF}),
        arguments(17, "a\\\\b\\001\\377", new byte[] {'a', '\\', 'b', 1, (byte) 0xFF}),
        arguments(
            2950,
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")),
        arguments(
            2950,
            "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
            UUID.fromString("ffffffff-ffff-ffff-ffff-ffffffffffff")),
        arguments(114, "{\"a\": [1, 2]}", new PgJson("{\"a\": [1, 2]}")),
        arguments(3802, "\"x\"", new PgJson("\"x\"")),
        arguments(1082, "2026-11-30", LocalDate.of(2026, 11, 30)),
        arguments(1082, "infinity", LocalDate.MAX),
        arguments(1082, "-infinity", LocalDate.MIN),
        arguments(1082, "0044-03-15 BC", LocalDate.of(-43, 3, 15)),
        arguments(1082, "0001-02-29 BC", LocalDate.of(0, 2, 29)),
        arguments(1082, "4714-11-24 BC", LocalDate.of(-4713, 11, 24)),
        arguments(1082, "5874897-12-31", LocalDate.of(5874897, 12, 31)),
        arguments(1083, "10:18:40", LocalTime.of(10, 18, 40)),
        arguments(1083, "10:18:40.5", LocalTime.of(10, 18, 40, 500_000_000)),
        arguments(1083, "23:59:59.999999", LocalTime.of(23, 59, 59, 999_999_000)),
        arguments(1083, "00:00:00", LocalTime.MIDNIGHT),
        arguments(1083, "24:00:00", LocalTime.MAX),
        arguments(1266, "10:18:40+02", OffsetTime.of(10, 18, 40, 0, ZoneOffset.ofHours(2))),
        arguments(
            1266,
            "10:18:40.5-03:30",
            OffsetTime.of(10, 18, 40, 500_000_000, ZoneOffset.ofHoursMinutes(-3, -30))),
        arguments(
            1266,
            "00:00:00+05:53:28",
            OffsetTime.of(0, 0, 0, 0, ZoneOffset.ofHoursMinutesSeconds(5, 53, 28))),
        arguments(
            1266,
            "24:00:00-15:59",
            OffsetTime.of(LocalTime.MAX, ZoneOffset.ofHoursMinutes(-15, -59))),
        arguments(
            1114,
            "2026-11-30 10:18:40.123456",
            LocalDateTime.of(2026, 11, 30, 10, 18, 40, 123_456_000)),
        arguments(1114, "2026-11-30 10:18:40", LocalDateTime.of(2026, 11, 30, 10, 18, 40)),
        arguments(1114, "0044-03-15 10:00:00 BC", LocalDateTime.of(-43, 3, 15, 10, 0)),
        arguments(
            1114,
            "294276-12-31 23:59:59.999999",
            LocalDateTime.of(294276, 12, 31, 23, 59, 59, 999_999_000)),
        arguments(1114, "infinity", LocalDateTime.MAX),
        arguments(1114, "-infinity", LocalDateTime.MIN),
        arguments(
            1184, "2026-11-30 10:18:40.123456+00", Instant.parse("2026-11-30T10:18:40.123456Z")),
        arguments(1184, "2026-11-30 10:18:40+05:30", Instant.parse("2026-11-30T04:48:40Z")),
        arguments(1184, "2026-11-30 10:18:40.5-08", Instant.parse("2026-11-30T18:18:40.5Z")),
        arguments(1184, "1901-01-01 00:00:00+05:53:28", Instant.parse("1900-12-31T18:06:32Z")),
        arguments(
            1184,
            "0044-03-15 10:00:00+00 BC",
            LocalDateTime.of(-43, 3, 15, 10, 0).toInstant(ZoneOffset.UTC)),
        arguments(1184, "infinity", Instant.MAX),
        arguments(1184, "-infinity", Instant.MIN),
        arguments(1186, "P1Y2M3DT4H5M6.5S", new PgInterval(14, 3, 4 * H + 5 * M + 6_500_000)),
        arguments(
            1186, "P-1Y-2M3DT-4H-5M-6.5S", new PgInterval(-14, 3, -(4 * H + 5 * M + 6_500_000))),
        arguments(1186, "PT0S", new PgInterval(0, 0, 0)),
        arguments(1186, "PT-0.5S", new PgInterval(0, 0, -500_000)),
        arguments(1186, "PT0.000001S", new PgInterval(0, 0, 1)),
        arguments(1186, "P1Y", new PgInterval(12, 0, 0)),
        arguments(1186, "P-3D", new PgInterval(0, -3, 0)),
        arguments(1186, "PT1M", new PgInterval(0, 0, M)),
        arguments(1186, "PT2562047788H", new PgInterval(0, 0, 2562047788L * H)),
        arguments(1186, "P178956970Y7M", new PgInterval(Integer.MAX_VALUE, 0, 0)),
        arguments(
            1186,
            "1 year 2 mons 3 days 04:05:06.5",
            new PgInterval(14, 3, 4 * H + 5 * M + 6_500_000)),
        arguments(
            1186,
            "-1 years -2 mons +3 days -04:05:06.5",
            new PgInterval(-14, 3, -(4 * H + 5 * M + 6_500_000))),
        arguments(1186, "00:00:00", new PgInterval(0, 0, 0)),
        arguments(1186, "1 day", new PgInterval(0, 1, 0)),
        // types kept as text
        arguments(869, "10.0.0.1/8", "10.0.0.1/8"),
        arguments(600, "(1,2)", "(1,2)"),
        arguments(1020, "{(1,1),(0,0);(2,2),(1,1)}", "{(1,1),(0,0);(2,2),(1,1)}"),
        arguments(70000, "happy", "happy"));
  }

  @ParameterizedTest(name = "oid {0}: {1}")
  @MethodSource("values")
  void decodesFromStringAndFromBytes(int oid, String text, Object expected) {
    assertDeepEquals(expected, PgTextValues.decode(oid, text));
    byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
    byte[] padded = new byte[utf8.length + 6];
    Arrays.fill(padded, (byte) '9');
    System.arraycopy(utf8, 0, padded, 3, utf8.length);
    assertDeepEquals(expected, PgTextValues.decode(oid, padded, 3, utf8.length));
  }

  /** Equality that compares byte arrays and nested lists by content, and BigDecimal with scale. */
  static void assertDeepEquals(Object expected, Object actual) {
    if (expected instanceof byte[] || actual instanceof byte[]) {
      if (!(expected instanceof byte[] && actual instanceof byte[])
          || !Arrays.equals((byte[]) expected, (byte[]) actual)) {
        fail("expected bytes " + describe(expected) + " but got " + describe(actual));
      }
    } else if (expected instanceof List<?> e && actual instanceof List<?> a) {
      assertEquals(e.size(), a.size(), "list size of " + actual);
      for (int i = 0; i < e.size(); i++) {
        assertDeepEquals(e.get(i), a.get(i));
      }
    } else {
      assertEquals(expected, actual);
      if (expected != null) {
        assertEquals(expected.getClass(), actual.getClass());
      }
    }
  }

  private static String describe(Object o) {
    return o instanceof byte[] ? Arrays.toString((byte[]) o) : String.valueOf(o);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "P1Y2M3DT4H5M6.5S",
    "P-1Y-2M3DT-4H-5M-6.5S",
    "PT0S",
    "PT-0.5S",
    "P1Y",
    "P-3D",
    "PT1M",
  })
  void isoIntervalsRoundTrip(String text) {
    assertEquals(text, ((PgInterval) PgTextValues.decode(1186, text)).toIso8601());
  }

  @ParameterizedTest(name = "oid {0}: \"{1}\"")
  @CsvSource(
      delimiter = '|',
      value = {
        "23|abc",
        "23|2147483648",
        "23|''",
        "23|-",
        "23|1.0",
        "23|' 1'",
        "23|'1 '",
        "21|40000",
        "20|1e3",
        "26|-1",
        "26|4294967296",
        "16|true",
        "16|''",
        "700|0x1p3",
        "701|1.5d",
        "701|''",
        "701|nan",
        "1700|1.2.3",
        "1700|''",
        "1700|nan",
        "2950|not-a-uuid",
        "2950|a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1g",
        "2950|a0eebc999c0b-4ef8-bb6d-6bb9bd380a11-",
        "17|\\x0",
        "17|\\xzz",
        "17|\\9",
        "17|\\",
        "1082|2026-13-01",
        "1082|2026-02-30",
        "1082|26-11-30",
        "1082|0000-01-01",
        "1082|2026-11-30 AD",
        "1082|2026-11-30 BC x",
        "1082|Infinity",
        "1083|25:00:00",
        "1083|10:18",
        "1083|24:00:01",
        "1083|10:18:40.",
        "1266|10:00:00",
        "1266|10:00:00+2",
        "1114|2026-11-30",
        "1114|2026-11-30T10:18:40",
        "1114|2026-11-30 24:00:00",
        "1184|2026-11-30 10:18:40",
        "1184|2026-11-30 10:18:40 BC+00",
        "1186|P",
        "1186|P1X",
        "1186|PT1.5H",
        "1186|P1.5D",
        "1186|1 fortnight",
        "1186|1",
        "1186|P1Y2",
        "1186|P99999999999Y",
        "1186|PT99999999999999999999H",
        "1007|{1,2",
        "1007|1,2",
        "1007|{1,a}",
        "1007|{1}x",
        "1007|[1:2]{1,2}",
        "1007|{,}",
        "1007|{1,{2}}x",
        "1009|{\"a}",
        "1009|{a\"b}",
        "1000|{t,x}",
      })
  void rejectsTextOfAnotherForm(int oid, String text) {
    RuntimeException e =
        assertThrows(RuntimeException.class, () -> PgTextValues.decode(oid, text), text);
    assertTrue(
        e instanceof IllegalArgumentException
            || e instanceof DateTimeException
            || e instanceof ArithmeticException,
        e.toString());
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    assertThrows(RuntimeException.class, () -> PgTextValues.decode(oid, b, 0, b.length), text);
  }

  @Test
  void namedDecodeFailureNamesColumnTypeAndText() {
    CdcDecodingException e =
        assertThrows(CdcDecodingException.class, () -> PgTextValues.decode("qty", 23, "x1"));
    assertTrue(e.getMessage().contains("\"qty\""), e.getMessage());
    assertTrue(e.getMessage().contains("type oid 23"), e.getMessage());
    assertTrue(e.getMessage().contains("\"x1\""), e.getMessage());
    String huge = "z".repeat(1000);
    e = assertThrows(CdcDecodingException.class, () -> PgTextValues.decode("d", 1082, huge));
    assertTrue(e.getMessage().length() < 300, e.getMessage());
    assertEquals(5, PgTextValues.decode("ok", 23, "5"));
  }

  @Test
  void builtinNames() {
    assertEquals(23, PgBuiltinType.oidNamed("int4"));
    assertEquals(3807, PgBuiltinType.oidNamed("_jsonb"));
    assertEquals(1043, PgBuiltinType.oidNamed("varchar"));
    assertEquals(1041, PgBuiltinType.oidNamed("_inet"));
    assertEquals(0, PgBuiltinType.oidNamed("mood"));
    assertEquals(0, PgBuiltinType.oidNamed("inet"));
    assertEquals(0, PgBuiltinType.oidNamed("_point"));
    assertTrue(PgBuiltinType.decodesText(1184));
    assertTrue(PgBuiltinType.decodesText(1041));
    assertFalse(PgBuiltinType.decodesText(869));
    assertFalse(PgBuiltinType.decodesText(1017));
    assertEquals(PgBuiltinType.INT4, PgBuiltinType.elementOf(1007));
    assertNull(PgBuiltinType.elementOf(23));
    assertEquals(PgBuiltinType.ArrayForm.TEXT, PgBuiltinType.elementOf(1017).arrays());
  }
}
