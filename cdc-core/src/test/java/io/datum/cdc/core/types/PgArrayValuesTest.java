package io.datum.cdc.core.types;

import static io.datum.cdc.core.types.PgTextValuesTest.assertDeepEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.datum.cdc.event.PgInterval;
import io.datum.cdc.event.PgJson;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Array text output ({@code array_out}) decodes to nested Lists of the element type. */
class PgArrayValuesTest {

  private static List<Object> list(Object... elements) {
    return Arrays.asList(elements);
  }

  static Stream<Arguments> arrays() {
    return Stream.of(
        arguments(1007, "{1,2,NULL}", list(1, 2, null)),
        arguments(1007, "{}", list()),
        arguments(1007, "{{1,2},{3,4}}", list(list(1, 2), list(3, 4))),
        arguments(
            1007,
            "{{{1},{2}},{{3},{NULL}}}",
            list(list(list(1), list(2)), list(list(3), list((Object) null)))),
        arguments(1007, "[0:1]={1,2}", list(1, 2)),
        arguments(1007, "[1:2][-1:0]={{1,2},{3,4}}", list(list(1, 2), list(3, 4))),
        arguments(1007, "{ 1 , 2 }", list(1, 2)),
        arguments(1005, "{-32768,32767}", list((short) -32768, (short) 32767)),
        arguments(1016, "{9223372036854775807}", list(Long.MAX_VALUE)),
        arguments(
            1009,
            "{a,\"b,c\",\"NULL\",NULL,\"with \\\"quote\\\" and \\\\ backslash\",\"\",\" x \",é}",
            list("a", "b,c", "NULL", null, "with \"quote\" and \\ backslash", "", " x ", "é")),
        arguments(1009, "{\"{braces}\",null,Null}", list("{braces}", null, null)),
        arguments(1015, "{x,y}", list("x", "y")),
        arguments(1014, "{\"a  \"}", list("a  ")),
        arguments(
            1231,
            "{1.10,NaN,-Infinity}",
            list(new BigDecimal("1.10"), Double.NaN, Double.NEGATIVE_INFINITY)),
        arguments(1022, "{1.5,-Infinity,NaN}", list(1.5, Double.NEGATIVE_INFINITY, Double.NaN)),
        arguments(1021, "{0.1}", list(0.1f)),
        arguments(1000, "{t,f,NULL}", list(true, false, null)),
        arguments(
            2951,
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            list(UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"))),
        arguments(
            1182,
            "{2026-11-30,infinity,\"0044-03-15 BC\"}",
            list(LocalDate.of(2026, 11, 30), LocalDate.MAX, LocalDate.of(-43, 3, 15))),
        arguments(
            1185,
            "{\"2026-11-30 10:18:40+00\",-infinity}",
            list(Instant.parse("2026-11-30T10:18:40Z"), Instant.MIN)),
        arguments(
            3807,
            "{\"{\\\"a\\\": 1}\",NULL,\"[]\"}",
            list(new PgJson("{\"a\": 1}"), null, new PgJson("[]"))),
        arguments(199, "{\"null\"}", list(new PgJson("null"))),
        arguments(1001, "{\"\\\\x0a0b\",NULL}", list(new byte[] {10, 11}, null)),
        arguments(1187, "{P1D,PT0S}", list(new PgInterval(0, 1, 0), new PgInterval(0, 0, 0))),
        arguments(1041, "{10.0.0.1,::1}", list("10.0.0.1", "::1")),
        arguments(791, "{\"$1,000.00\"}", list("$1,000.00")),
        arguments(1028, "{4294967295}", list(4294967295L)));
  }

  @ParameterizedTest(name = "oid {0}: {1}")
  @MethodSource("arrays")
  void decodes(int oid, String text, List<Object> expected) {
    assertDeepEquals(expected, PgTextValues.decode(oid, text));
  }

  /**
   * Only array_isspace's six characters are whitespace (arrayfuncs.c): U+2028, U+001F and the like
   * are element text, which array_out does not quote ({@code ARRAY[U&'\2028x', E'\x1fz']} prints
   * them raw).
   */
  @Test
  void onlyPostgresArrayWhitespaceIsTrimmed() {
    String lineSeparator = String.valueOf((char) 0x2028);
    String unitSeparator = String.valueOf((char) 0x1F);
    assertDeepEquals(
        List.of(lineSeparator + "x", unitSeparator + "z"),
        PgArrayValues.parse("{" + lineSeparator + "x," + unitSeparator + "z}", 25));
    assertDeepEquals(
        List.of(lineSeparator, "a"), PgArrayValues.parse("{" + lineSeparator + ",a}", 25));
    assertDeepEquals(List.of("a", "b"), PgArrayValues.parse("{ \t\n\r\013\fa \013, b\f}", 25));
    assertThrows(IllegalArgumentException.class, () -> PgArrayValues.parse("{ ,a}", 25));
  }

  /**
   * array_in (arrayfuncs.c): an unquoted {@code NULL} in any case is SQL NULL, but not when a
   * backslash escaped any of its characters, nor quoted; an escaped trailing space is kept.
   */
  @Test
  void onlyAnUnescapedUnquotedNullIsSqlNull() {
    assertDeepEquals(
        Arrays.asList(null, null, "NULL", "NULL", "null "),
        PgArrayValues.parse("{NULL,nUlL,\"NULL\",N\\ULL,null\\ }", 25));
  }

  @Test
  void resultIsUnmodifiable() {
    @SuppressWarnings("unchecked")
    List<Object> list = (List<Object>) PgTextValues.decode(1007, "{1}");
    assertThrows(UnsupportedOperationException.class, () -> list.add(2));
  }
}
