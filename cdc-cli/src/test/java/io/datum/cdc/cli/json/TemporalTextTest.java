package io.datum.cdc.cli.json;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class TemporalTextTest {

  /** Reference for the date-time part: year at least 4 digits, sign as ISO 8601 expanded form. */
  private static final DateTimeFormatter REFERENCE =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss").withZone(ZoneOffset.UTC);

  private final TemporalText text = new TemporalText();

  private String s(int length) {
    return new String(text.buffer(), 0, length);
  }

  private static String fraction(int nano) {
    int micros = nano / 1000;
    if (micros == 0) {
      return "";
    }
    String digits = String.format("%06d", micros).replaceAll("0+$", "");
    return "." + digits;
  }

  @Test
  void instantsMatchJavaTimeOverPostgresRange() {
    SplittableRandom random = new SplittableRandom(42);
    // PostgreSQL timestamptz: 4713 BC to 294276 AD; go a little beyond both ends.
    long min = Instant.parse("-5000-01-01T00:00:00Z").getEpochSecond();
    long max = Instant.parse("+300000-01-01T00:00:00Z").getEpochSecond();
    for (int i = 0; i < 200_000; i++) {
      long seconds =
          i < 100_000
              ? random.nextLong(min, max)
              : random.nextLong(-5_000_000_000L, 5_000_000_000L);
      int nano = random.nextInt(4) == 0 ? 0 : random.nextInt(1_000_000) * 1000;
      Instant instant = Instant.ofEpochSecond(seconds, nano);
      String expected = REFERENCE.format(instant) + fraction(nano) + "Z";
      assertEquals(expected, s(text.instant(instant)), instant::toString);
    }
  }

  @Test
  void instantEdgesOfJavaTimeRange() {
    Instant nearMax = Instant.MAX.minusSeconds(1);
    assertEquals("+1000000000-12-31T23:59:58.999999Z", s(text.instant(nearMax)));
    Instant nearMin = Instant.MIN.plusSeconds(1);
    assertEquals("-1000000000-01-01T00:00:01Z", s(text.instant(nearMin)));
    assertEquals("1970-01-01T00:00:00Z", s(text.instant(Instant.EPOCH)));
    assertEquals("2000-02-29T12:00:00Z", s(text.instant(Instant.parse("2000-02-29T12:00:00Z"))));
  }

  @Test
  void datesMatchLocalDateToString() {
    for (int year : new int[] {-1_000_000, -4713, -43, -1, 0, 1, 999, 2026, 9999, 10000, 5874897}) {
      LocalDate date = LocalDate.of(year, 2, 28);
      assertEquals(date.toString(), s(text.date(date)));
    }
    SplittableRandom random = new SplittableRandom(7);
    for (int i = 0; i < 100_000; i++) {
      LocalDate date = LocalDate.ofEpochDay(random.nextLong(-3_000_000L, 3_000_000L));
      assertEquals(date.toString(), s(text.date(date)));
    }
  }

  @Test
  void timesKeepSecondsAndTrimFraction() {
    assertEquals("00:00:00", s(text.time(LocalTime.MIDNIGHT)));
    assertEquals("10:18:00", s(text.time(LocalTime.of(10, 18))));
    assertEquals("10:18:40.5", s(text.time(LocalTime.of(10, 18, 40, 500_000_000))));
    assertEquals("10:18:40.05", s(text.time(LocalTime.of(10, 18, 40, 50_000_000))));
    assertEquals("10:18:40.000001", s(text.time(LocalTime.of(10, 18, 40, 1_000))));
    assertEquals("10:18:40", s(text.time(LocalTime.of(10, 18, 40, 999))));
    assertEquals("24:00:00", s(text.time(LocalTime.MAX)), "PostgreSQL's 24:00:00");
    assertEquals("23:59:59.999999", s(text.time(LocalTime.of(23, 59, 59, 999_999_000))));
  }

  @Test
  void offsetsAreNumericAlways() {
    assertEquals(
        "10:18:40+00:00", s(text.offsetTime(OffsetTime.of(10, 18, 40, 0, ZoneOffset.UTC))));
    assertEquals(
        "10:18:40-15:59:59",
        s(
            text.offsetTime(
                OffsetTime.of(10, 18, 40, 0, ZoneOffset.ofHoursMinutesSeconds(-15, -59, -59)))));
    assertEquals(
        "10:18:40.1+14:00",
        s(text.offsetTime(OffsetTime.of(10, 18, 40, 100_000_000, ZoneOffset.ofHours(14)))));
  }

  @Test
  void localDateTimes() {
    assertEquals(
        "2026-11-30T10:18:40.123456",
        s(text.localDateTime(LocalDateTime.of(2026, 11, 30, 10, 18, 40, 123_456_000))));
    assertEquals(
        "+10000-01-01T00:00:00", s(text.localDateTime(LocalDateTime.of(10000, 1, 1, 0, 0))));
    assertEquals(
        "-0001-12-31T23:59:59", s(text.localDateTime(LocalDateTime.of(-1, 12, 31, 23, 59, 59))));
  }
}
