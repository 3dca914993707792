package io.datum.cdc.core.delivery;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.TransactionInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Handoff}: order, capacity, timeouts, and when a producer waiting on a full queue resumes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HandoffTest {

  private static final List<ColumnInfo> COLUMNS = List.of(new ColumnInfo("id", 23, -1, true));

  private static ChangeEvent event(int i) {
    PgLsn lsn = PgLsn.of(1000 + i);
    CdcOffset offset = new CdcOffset("slot", lsn, lsn, 0, 0, 1);
    return new InsertEvent(
        offset,
        new TransactionInfo(i + 1, lsn, lsn, Instant.EPOCH, null, 1),
        new TableId("public", "t"),
        Row.of(COLUMNS, new Object[] {i}));
  }

  /** Offers an event on another thread, waiting up to a minute; returns once it waits for room. */
  private static CompletableFuture<Boolean> offerWaiting(
      Handoff h, ChangeEvent event, ExecutorService producer) {
    AtomicReference<Thread> thread = new AtomicReference<>();
    CompletableFuture<Boolean> added =
        CompletableFuture.supplyAsync(
            () -> {
              thread.set(Thread.currentThread());
              try {
                return h.offer(event, 60_000);
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            },
            producer);
    // parked in the wait for room (a timed wait; the lock's wait would be untimed)
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> thread.get() != null && thread.get().getState() == Thread.State.TIMED_WAITING);
    return added;
  }

  @Test
  void eventsComeOutInOrderAndAFullQueueRefusesWithoutWaiting() throws Exception {
    Handoff h = new Handoff(3);
    List<ChangeEvent> in = List.of(event(0), event(1), event(2), event(3));
    assertTrue(h.isEmpty());
    assertTrue(h.offer(in.get(0)));
    assertTrue(h.offer(in.get(1), 0));
    assertTrue(h.offer(in.get(2)));
    assertFalse(h.offer(in.get(3)), "full");
    assertFalse(h.offer(in.get(3), 0), "full, no wait");
    assertFalse(h.offer(in.get(3), 20), "full, nobody takes");
    assertEquals(3, h.size());
    assertSame(in.get(0), h.poll(0));
    assertTrue(h.offer(in.get(3)), "a place is free: an offer that does not wait takes it");
    List<ChangeEvent> out = new ArrayList<>();
    assertEquals(2, h.drainTo(out, 2));
    assertEquals(List.of(in.get(1), in.get(2)), out);
    assertSame(in.get(3), h.poll(10));
    assertNull(h.poll(0));
    assertNull(h.poll(5), "empty: null after the timeout");
    assertThrows(NullPointerException.class, () -> h.offer(null));
    assertThrows(IllegalArgumentException.class, () -> new Handoff(0));
  }

  @Test
  void aProducerWaitingOnAFullQueueResumesOnceHalfIsTakenAndEverythingArrivesInOrder()
      throws Exception {
    Handoff h = new Handoff(4);
    for (int i = 0; i < 4; i++) {
      assertTrue(h.offer(event(i)));
    }
    ExecutorService producer = Executors.newSingleThreadExecutor();
    try {
      ChangeEvent fifth = event(4);
      CompletableFuture<Boolean> added = offerWaiting(h, fifth, producer);
      h.poll(0); // 3 left: above half, the producer stays parked
      assertFalse(added.isDone());
      h.poll(0); // 2 left: half, it is woken
      assertTrue(added.get(30, TimeUnit.SECONDS));
      assertEquals(3, h.size());
      assertEquals(2, h.poll(0).offset().commitLsn().asLong() - 1000);
      assertEquals(3, h.poll(0).offset().commitLsn().asLong() - 1000);
      assertSame(fifth, h.poll(0));
    } finally {
      producer.shutdownNow();
    }
  }

  @Test
  void clearingWakesAWaitingProducer() throws Exception {
    Handoff h = new Handoff(2);
    h.offer(event(0));
    h.offer(event(1));
    ExecutorService producer = Executors.newSingleThreadExecutor();
    try {
      CompletableFuture<Boolean> added = offerWaiting(h, event(2), producer);
      h.clear();
      assertTrue(added.get(30, TimeUnit.SECONDS));
      assertEquals(1, h.size());
    } finally {
      producer.shutdownNow();
    }
  }

  @Test
  void oneProducerAndOneConsumerPassAMillionEventsInOrderThroughASmallQueue() throws Exception {
    Handoff h = new Handoff(16);
    int n = 1_000_000;
    ChangeEvent[] events = new ChangeEvent[64];
    for (int i = 0; i < events.length; i++) {
      events[i] = event(i);
    }
    ExecutorService producer = Executors.newSingleThreadExecutor();
    try {
      CompletableFuture<Void> produced =
          CompletableFuture.runAsync(
              () -> {
                try {
                  for (int i = 0; i < n; i++) {
                    while (!h.offer(events[i % events.length], 50)) {
                      // full for a whole wait: offer again, as Merge does
                    }
                  }
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              },
              producer);
      for (int i = 0; i < n; i++) {
        ChangeEvent e = h.poll(10_000);
        if (e != events[i % events.length]) {
          throw new AssertionError("event " + i + " out of order: " + e);
        }
      }
      produced.get(30, TimeUnit.SECONDS);
      assertTrue(h.isEmpty());
    } finally {
      producer.shutdownNow();
    }
  }
}
