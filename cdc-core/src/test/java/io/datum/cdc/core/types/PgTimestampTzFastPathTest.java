package io.datum.cdc.core.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The fast path of {@code timestamptz} text ({@link PgTemporalValues#commonTimestampTz}) gives the
 * instant the general parser gives, and leaves every other shape to it.
 */
class PgTimestampTzFastPathTest {

  /**
   * {@code timestamptz_out} in the ISO style: fraction without trailing zeros, offset
   * ±HH[:MM[:SS]].
   */
  private static String text(LocalDateTime local, ZoneOffset offset) {
    StringBuilder b =
        new StringBuilder(
            String.format(
                "%04d-%02d-%02d %02d:%02d:%02d",
                local.getYear(),
                local.getMonthValue(),
                local.getDayOfMonth(),
                local.getHour(),
                local.getMinute(),
                local.getSecond()));
    int micros = local.getNano() / 1000;
    if (micros != 0) {
      String f = String.format("%06d", micros);
      b.append('.').append(f.replaceAll("0+$", ""));
    }
    int total = offset.getTotalSeconds();
    int abs = Math.abs(total);
    b.append(total < 0 ? '-' : '+').append(String.format("%02d", abs / 3600));
    if (abs % 3600 != 0) {
      b.append(String.format(":%02d", abs % 3600 / 60));
      if (abs % 60 != 0) {
        b.append(String.format(":%02d", abs % 60));
      }
    }
    return b.toString();
  }

  @Test
  void theFastPathGivesTheGeneralParsersInstant() {
    Random random = new Random(1030);
    for (int i = 0; i < 200_000; i++) {
      LocalDateTime local =
          LocalDateTime.of(1000 + random.nextInt(9000), 1, 1, 0, 0)
              .plusDays(random.nextInt(366))
              .plusSeconds(random.nextInt(86_400))
              .plusNanos(random.nextInt(4) == 0 ? 0 : random.nextInt(1_000_000) * 1000L);
      int seconds =
          switch (random.nextInt(4)) {
            case 0 -> 0;
            case 1 -> (random.nextInt(37) - 18) * 3600;
            case 2 -> (random.nextInt(36 * 4 + 1) - 18 * 4) * 900;
            default -> random.nextInt(2 * 18 * 3600 + 1) - 18 * 3600;
          };
      String text = text(local, ZoneOffset.ofTotalSeconds(seconds));
      Instant fast = PgTemporalValues.commonTimestampTz(text);
      assertNotNull(fast, text);
      assertEquals(PgTemporalValues.parseTimestampTzGeneral(text), fast, text);
      assertEquals(local.toInstant(ZoneOffset.ofTotalSeconds(seconds)), fast, text);
    }
  }

  @Test
  void otherShapesGoToTheGeneralParser() {
    for (String text :
        List.of(
            "infinity",
            "-infinity",
            "0044-03-15 12:00:00+00 BC",
            "10000-01-01 00:00:00+00",
            "2024-02-30 00:00:00+00",
            "2023-02-29 00:00:00+00",
            "2024-13-01 00:00:00+00",
            "2024-01-01 24:00:00+00",
            "2024-01-01 00:60:00+00",
            "2024-01-01 00:00:60+00",
            "2024-01-01 00:00:00",
            "2024-01-01 00:00:00.+00",
            "2024-01-01 00:00:00.1234567890+00",
            "2024-01-01 00:00:00+19",
            "2024-01-01 00:00:00+18:00:01",
            "2024-01-01 00:00:00+05:3",
            "2024-01-01T00:00:00+00",
            "0000-01-01 00:00:00+00")) {
      assertNull(PgTemporalValues.commonTimestampTz(text), text);
    }
    assertEquals(Instant.MAX, PgTemporalValues.parseTimestampTz("infinity"));
    assertEquals(
        LocalDateTime.of(-43, 3, 15, 12, 0).toInstant(ZoneOffset.UTC),
        PgTemporalValues.parseTimestampTz("0044-03-15 12:00:00+00 BC"));
    assertThrows(
        RuntimeException.class, () -> PgTemporalValues.parseTimestampTz("2024-02-30 00:00:00+00"));
    assertThrows(
        RuntimeException.class, () -> PgTemporalValues.parseTimestampTz("2024-01-01 24:00:00+00"));
  }

  @Test
  void leapDaysAndTheEndsOfTheFastRange() {
    for (String text :
        List.of(
            "2024-02-29 23:59:59.999999+00",
            "2000-02-29 00:00:00-12",
            "1000-01-01 00:00:00+14:59:59",
            "9999-12-31 23:59:59.999999-18",
            "1970-01-01 00:00:00+00",
            "1969-12-31 23:59:59.5+00")) {
      assertEquals(
          PgTemporalValues.parseTimestampTzGeneral(text),
          PgTemporalValues.commonTimestampTz(text),
          text);
    }
  }
}
