package io.datum.cdc.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LagProbeTest {

  @Test
  void aFailedReadIsNaNCountedAndRetriedOnlyAfterTheInterval() {
    AtomicLong now = new AtomicLong(1_000);
    AtomicInteger opens = new AtomicInteger();
    LagProbe probe =
        new LagProbe(
            "s",
            () -> {
              opens.incrementAndGet();
              throw new SQLException("refused");
            },
            100,
            now::get,
            () -> false);
    assertTrue(Double.isNaN(probe.bytes()));
    assertEquals(1, probe.errors());
    now.addAndGet(99);
    assertTrue(Double.isNaN(probe.bytes()), "cached within the interval");
    assertEquals(2, opens.get(), "a failed read is tried once more on a new connection");
    assertEquals(1, probe.errors());
    now.addAndGet(1);
    assertTrue(Double.isNaN(probe.bytes()));
    assertEquals(4, opens.get(), "read again once the interval passed");
    assertEquals(2, probe.errors());
  }

  @Test
  void aFailedReadWhileTheSourceStartsIsNaNButNotAnError() {
    AtomicLong now = new AtomicLong(1_000);
    java.util.concurrent.atomic.AtomicBoolean starting =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    LagProbe probe =
        new LagProbe(
            "s",
            () -> {
              throw new SQLException("replication slot \"s\" does not exist");
            },
            100,
            now::get,
            starting::get);
    assertTrue(Double.isNaN(probe.bytes()));
    assertEquals(0, probe.errors(), "the slot --create-slot makes is not there yet");
    starting.set(false);
    now.addAndGet(100);
    assertTrue(Double.isNaN(probe.bytes()));
    assertEquals(1, probe.errors(), "once streaming, a failed read counts");
  }

  @Test
  void afterCloseNothingIsRead() {
    AtomicInteger opens = new AtomicInteger();
    LagProbe probe =
        new LagProbe(
            "s",
            () -> {
              opens.incrementAndGet();
              throw new SQLException("refused");
            },
            1,
            System::nanoTime,
            () -> false);
    probe.close();
    assertTrue(Double.isNaN(probe.bytes()));
    assertEquals(0, opens.get());
  }
}
