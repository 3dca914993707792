package io.datum.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class PgLsnTest {

  @ParameterizedTest
  @CsvSource({
    "0/0, 0",
    "0/16B3748, 23803720",
    "1/0, 4294967296",
    "FFFFFFFF/FFFFFFFF, -1",
    "16/B374D848, 97500059720",
  })
  void parsePrintRoundTrip(String text, long raw) {
    PgLsn lsn = PgLsn.parse(text);
    assertEquals(raw, lsn.asLong());
    assertEquals(text, lsn.toString());
    assertEquals(lsn, PgLsn.parse(lsn.toString()));
  }

  @Test
  void lowerCaseInputIsAcceptedAndPrintedUpperCase() {
    PgLsn lsn = PgLsn.parse("0/16b3748");
    assertEquals(0x16B3748L, lsn.asLong());
    assertEquals("0/16B3748", lsn.toString());
    assertEquals("ABCDEF/ABCDEF", PgLsn.parse("abcdef/aBcDeF").toString());
  }

  @Test
  void toStringIsEachHalfInUpperCaseHexadecimal() {
    java.util.Random random = new java.util.Random(30);
    List<Long> values =
        new ArrayList<>(List.of(0L, 1L, 0xFL, 0x10L, 0xFFFF_FFFFL, 1L << 32, -1L, Long.MIN_VALUE));
    for (int i = 0; i < 10_000; i++) {
      values.add(random.nextLong() >>> random.nextInt(64));
    }
    for (long v : values) {
      String expected =
          Long.toHexString(v >>> 32).toUpperCase(java.util.Locale.ROOT)
              + '/'
              + Long.toHexString(v & 0xFFFF_FFFFL).toUpperCase(java.util.Locale.ROOT);
      assertEquals(expected, PgLsn.of(v).toString(), Long.toHexString(v));
    }
  }

  @Test
  void toStringHasNoLeadingZeros() {
    assertEquals("0/0", PgLsn.parse("00000000/00000000").toString());
    assertEquals("1/A", PgLsn.parse("00000001/0000000a").toString());
    assertEquals("0/0", PgLsn.ZERO.toString());
    assertEquals("1/0", PgLsn.of(1L << 32).toString());
    assertEquals("0/1", PgLsn.of(1L).toString());
    assertEquals("80000000/0", PgLsn.of(Long.MIN_VALUE).toString());
    assertEquals("7FFFFFFF/FFFFFFFF", PgLsn.of(Long.MAX_VALUE).toString());
  }

  @Test
  void ofAndAsLong() {
    assertSame(PgLsn.ZERO, PgLsn.of(0L));
    assertSame(PgLsn.ZERO, PgLsn.parse("0/0"));
    assertTrue(PgLsn.ZERO.isZero());
    assertFalse(PgLsn.of(1L).isZero());
    assertEquals(0x1_0000_0002L, PgLsn.of(0x1_0000_0002L).asLong());
    assertEquals(-1L, PgLsn.of(-1L).asLong());
    assertEquals(PgLsn.parse("1/2"), PgLsn.of(0x1_0000_0002L));
  }

  @Test
  void unsignedOrdering() {
    PgLsn max = PgLsn.parse("FFFFFFFF/FFFFFFFF");
    PgLsn one = PgLsn.parse("0/1");
    assertTrue(max.isAfter(one));
    assertFalse(max.isBefore(one));
    assertTrue(one.isBefore(max));
    assertFalse(one.isAfter(max));
    assertEquals(1, Integer.signum(max.compareTo(one)));
    assertEquals(-1, Integer.signum(one.compareTo(max)));

    PgLsn highBit = PgLsn.parse("80000000/0");
    PgLsn belowHighBit = PgLsn.parse("7FFFFFFF/FFFFFFFF");
    assertTrue(highBit.isAfter(belowHighBit));
    assertTrue(PgLsn.parse("1/0").isAfter(PgLsn.parse("0/FFFFFFFF")));
  }

  @Test
  void comparisonsAreConsistentWithCompareUnsigned() {
    long[] raws = {
      0L, 1L, 2L, 0xFFFF_FFFFL, 0x1_0000_0000L, Long.MAX_VALUE, Long.MIN_VALUE, -2L, -1L
    };
    for (long a : raws) {
      for (long b : raws) {
        PgLsn x = PgLsn.of(a);
        PgLsn y = PgLsn.of(b);
        int expected = Integer.signum(Long.compareUnsigned(a, b));
        String pair = x + " vs " + y;
        assertEquals(expected, Integer.signum(x.compareTo(y)), pair);
        assertEquals(expected > 0, x.isAfter(y), pair);
        assertEquals(expected < 0, x.isBefore(y), pair);
        assertEquals(expected == 0, x.equals(y), pair);
      }
    }
  }

  @Test
  void sortingIsUnsigned() {
    List<PgLsn> lsns =
        new ArrayList<>(
            List.of(
                PgLsn.parse("FFFFFFFF/FFFFFFFF"),
                PgLsn.parse("0/1"),
                PgLsn.parse("80000000/0"),
                PgLsn.ZERO,
                PgLsn.parse("7FFFFFFF/FFFFFFFF")));
    lsns.sort(null);
    assertEquals(
        List.of(
            PgLsn.ZERO,
            PgLsn.parse("0/1"),
            PgLsn.parse("7FFFFFFF/FFFFFFFF"),
            PgLsn.parse("80000000/0"),
            PgLsn.parse("FFFFFFFF/FFFFFFFF")),
        lsns);
  }

  @Test
  void equalsAndHashCode() {
    PgLsn a = PgLsn.parse("0/16B3748");
    PgLsn b = PgLsn.of(0x16B3748L);
    assertEquals(a, b);
    assertEquals(b, a);
    assertEquals(a.hashCode(), b.hashCode());
    assertEquals(Long.hashCode(0x16B3748L), a.hashCode());
    assertEquals(a, a);
    assertNotEquals(a, PgLsn.parse("0/16B3749"));
    assertNotEquals(a, null);
    assertNotEquals(a, "0/16B3748");
    assertNotEquals(a, 0x16B3748L);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "", "/", "0/", "/0", "G/0", "0/G", "0/1/2", "123456789/0", "0/123456789", "0x1/0",
        " 0/1", "0/1 ", "0 /1", "+1/0", "-1/0", "0/-1", "0", "00", "0//1", "0\\1"
      })
  void badStringsAreRejectedQuotingTheInput(String text) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> PgLsn.parse(text));
    assertEquals("not an LSN of the form X/X (hexadecimal): \"" + text + "\"", e.getMessage());
  }

  @Test
  void nullIsRejected() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> PgLsn.parse(null));
    assertEquals("LSN must not be null", e.getMessage());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "\uFF10/\uFF11", // fullwidth 0/1
        "\uFF21/0", // fullwidth A/0
        "\u0661/0", // Arabic-Indic digit one
        "0/\u0967" // Devanagari digit one
      })
  void nonAsciiDigitsAreRejected(String text) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> PgLsn.parse(text));
    assertEquals("not an LSN of the form X/X (hexadecimal): \"" + text + "\"", e.getMessage());
  }
}
