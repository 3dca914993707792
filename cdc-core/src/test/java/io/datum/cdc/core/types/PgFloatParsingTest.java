package io.datum.cdc.core.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * float4 and float8 text decode to exactly what {@link Double#parseDouble} and {@link
 * Float#parseFloat} give (the parser is FastDoubleParser's): bit for bit, on the shortest-exact
 * texts float8out prints, on 15 to 17 significant digits, exponents at the range's ends
 * (subnormals, overflow to infinity), and on texts no server prints.
 */
class PgFloatParsingTest {

  private static List<String> texts(long seed, int n) {
    Random random = new Random(seed);
    List<String> out =
        new ArrayList<>(
            List.of(
                "0",
                "-0",
                "1",
                "0.1",
                "1e-324",
                "2e-324",
                "4.9e-324",
                "2.2250738585072014e-308",
                "2.2250738585072011e-308",
                "1.7976931348623157e+308",
                "1.7976931348623159e+308",
                "1e+309",
                "-1e+400",
                "NaN",
                "Infinity",
                "-Infinity",
                "9007199254740993",
                "0.30000000000000004",
                "123456789012345678901234567890",
                ".5",
                "5.",
                "1E5",
                "+1.5",
                "3.4028235e+38",
                "3.4028236e+38",
                "1.4e-45",
                "7e-46"));
    for (int i = 0; i < n; i++) {
      double d;
      switch (random.nextInt(4)) {
        case 0 -> d = Double.longBitsToDouble(random.nextLong());
        case 1 -> d = random.nextDouble() * Math.pow(10, random.nextInt(40) - 20);
        case 2 -> d = (float) (random.nextGaussian() * 1e6);
        default -> d = random.nextLong() / 1e3;
      }
      if (Double.isNaN(d) || Double.isInfinite(d)) {
        continue;
      }
      out.add(Double.toString(d).replace("E", "e+").replace("e+-", "e-"));
      // a random mantissa of 1 to 20 digits with a random exponent, as any server might print
      StringBuilder b = new StringBuilder(random.nextBoolean() ? "-" : "");
      int digits = 1 + random.nextInt(20);
      for (int k = 0; k < digits; k++) {
        b.append((char) ('0' + random.nextInt(10)));
        if (k == 0 && random.nextBoolean()) {
          b.append('.');
        }
      }
      if (random.nextBoolean()) {
        b.append('e').append(random.nextInt(700) - 350);
      }
      out.add(b.toString());
    }
    return out;
  }

  @Test
  void float8DecodesBitForBitAsDoubleParseDouble() {
    for (String text : texts(8, 200_000)) {
      assertEquals(
          Double.doubleToRawLongBits(Double.parseDouble(text)),
          Double.doubleToRawLongBits(PgScalarValues.parseFloat8(text)),
          text);
    }
  }

  @Test
  void float4DecodesBitForBitAsFloatParseFloat() {
    for (String text : texts(4, 200_000)) {
      assertEquals(
          Float.floatToRawIntBits(Float.parseFloat(text)),
          Float.floatToRawIntBits(PgScalarValues.parseFloat4(text)),
          text);
    }
  }

  @Test
  void malformedTextIsRefusedAsBefore() {
    for (String text : List.of("", "-", "e5", "1e", "1..2", "--1", "1e5.5", " 1", "0x1p3", "1f")) {
      assertThrows(NumberFormatException.class, () -> PgScalarValues.parseFloat8(text), text);
      assertThrows(NumberFormatException.class, () -> PgScalarValues.parseFloat4(text), text);
    }
  }
}
