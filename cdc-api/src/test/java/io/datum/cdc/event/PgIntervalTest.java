package io.datum.cdc.event;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.time.Period;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PgIntervalTest {

  private static final long SECOND = 1_000_000L;
  private static final long MINUTE = 60 * SECOND;
  private static final long HOUR = 60 * MINUTE;

  @Test
  void fullInterval() {
    PgInterval interval = new PgInterval(14, 3, 4 * HOUR + 5 * MINUTE + 6_500_000L);
    assertEquals("P1Y2M3DT4H5M6.5S", interval.toIso8601());
    assertEquals("P1Y2M3DT4H5M6.5S", interval.toString());
  }

  @Test
  void zeroIsPT0S() {
    assertEquals("PT0S", new PgInterval(0, 0, 0L).toIso8601());
  }

  @ParameterizedTest
  @CsvSource({
    // months, days, micros, expected
    "12, 0, 0, P1Y",
    "1, 0, 0, P1M",
    "11, 0, 0, P11M",
    "24, 0, 0, P2Y",
    "0, 1, 0, P1D",
    "0, 400, 0, P400D",
    "0, 0, 3600000000, PT1H",
    "0, 0, 90000000000, PT25H",
    "0, 0, 60000000, PT1M",
    "0, 0, 1000000, PT1S",
    "0, 0, 3660000000, PT1H1M",
    "0, 0, 3601000000, PT1H1S",
    "1, 0, 1000000, P1MT1S",
    "0, 1, 60000000, P1DT1M",
  })
  void partsAreOmittedWhenZero(int months, int days, long micros, String expected) {
    assertEquals(expected, new PgInterval(months, days, micros).toIso8601());
  }

  @ParameterizedTest
  @CsvSource({
    "0, 0, 1, PT0.000001S",
    "0, 0, 10, PT0.00001S",
    "0, 0, 500000, PT0.5S",
    "0, 0, 120000, PT0.12S",
    "0, 0, 123456, PT0.123456S",
    "0, 0, 1000001, PT1.000001S",
    "0, 0, 59999999, PT59.999999S",
    "0, 0, 61500000, PT1M1.5S",
  })
  void fractionsAreTrimmed(int months, int days, long micros, String expected) {
    assertEquals(expected, new PgInterval(months, days, micros).toIso8601());
  }

  @ParameterizedTest
  @CsvSource({
    "-14, 0, 0, P-1Y-2M",
    "-12, 0, 0, P-1Y",
    "-2, 0, 0, P-2M",
    "0, -3, 0, P-3D",
    "-14, -3, 0, P-1Y-2M-3D",
    "0, 0, -3600000000, PT-1H",
    "0, 0, -10800000000, PT-3H",
    "-14, 0, -10800000000, P-1Y-2MT-3H",
    "0, 0, -60000000, PT-1M",
    "0, 0, -1000000, PT-1S",
    "0, 0, -1500000, PT-1.5S",
    "0, 0, -500000, PT-0.5S",
    "0, 0, -1, PT-0.000001S",
    "0, 0, -60500000, PT-1M-0.5S",
    "0, 0, -3600500000, PT-1H-0.5S",
    "0, 0, -14706500000, PT-4H-5M-6.5S",
    // mixed signs, as PostgreSQL's own iso_8601 IntervalStyle prints them
    "1, -1, 0, P1M-1D",
    "0, 1, -3600000000, P1DT-1H",
    "13, -2, 1500000, P1Y1M-2DT1.5S",
  })
  void negativePartsCarryTheirSign(int months, int days, long micros, String expected) {
    assertEquals(expected, new PgInterval(months, days, micros).toIso8601());
  }

  @Test
  void negativeSubSecondIsNotPrintedAsPositive() {
    // -0.5 s must not lose its sign ("PT0.5S") nor print as "PT-0-0.5S"
    assertEquals("PT-0.5S", new PgInterval(0, 0, -500_000L).toIso8601());
    // cross-check the time part with java.time's ISO-8601 parser
    assertEquals(Duration.ofMillis(-500), Duration.parse("PT-0.5S"));
    assertEquals(
        Duration.ofMillis(-500), Duration.parse(new PgInterval(0, 0, -500_000L).toIso8601()));
    assertEquals(
        Duration.ofMillis(-60_500), Duration.parse(new PgInterval(0, 0, -60_500_000L).toIso8601()));
    assertEquals(Duration.ofNanos(-1000), Duration.parse(new PgInterval(0, 0, -1L).toIso8601()));
  }

  @Test
  void datePartParsesAsAPeriod() {
    assertEquals(Period.of(-1, -2, -3), Period.parse(new PgInterval(-14, -3, 0).toIso8601()));
    assertEquals(Period.of(1, 2, 3), Period.parse(new PgInterval(14, 3, 0).toIso8601()));
  }

  @Test
  void extremes() {
    // PostgreSQL's interval range: months and days are int32, the time part int64 microseconds
    assertEquals("P178956970Y7M", new PgInterval(Integer.MAX_VALUE, 0, 0L).toIso8601());
    assertEquals("P-178956970Y-8M", new PgInterval(Integer.MIN_VALUE, 0, 0L).toIso8601());
    assertEquals("PT2562047788H54.775807S", new PgInterval(0, 0, Long.MAX_VALUE).toIso8601());
    assertEquals("PT-2562047788H-54.775808S", new PgInterval(0, 0, Long.MIN_VALUE).toIso8601());
    assertEquals(
        Duration.of(Long.MIN_VALUE, ChronoUnit.MICROS),
        Duration.parse(new PgInterval(0, 0, Long.MIN_VALUE).toIso8601()));
  }

  @Test
  void recordEquality() {
    assertEquals(new PgInterval(1, 2, 3L), new PgInterval(1, 2, 3L));
    assertEquals(new PgInterval(1, 2, 3L).hashCode(), new PgInterval(1, 2, 3L).hashCode());
  }
}
