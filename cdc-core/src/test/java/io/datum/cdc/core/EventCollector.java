package io.datum.cdc.core;

import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** A handler that queues every event, acknowledging it at once or not at all. */
final class EventCollector implements CdcHandler {
  private final LinkedBlockingQueue<ChangeEvent> events = new LinkedBlockingQueue<>();
  private final Predicate<ChangeEvent> acknowledge;

  EventCollector(boolean acknowledge) {
    this(e -> acknowledge);
  }

  /**
   * @param acknowledge which events to acknowledge at once; the others are never acknowledged
   */
  EventCollector(Predicate<ChangeEvent> acknowledge) {
    this.acknowledge = acknowledge;
  }

  @Override
  public void handle(ChangeEvent event, CdcCheckpointHandle checkpoints) {
    events.add(event);
    if (acknowledge.test(event)) {
      checkpoints.acknowledge(event.offset());
    }
  }

  /** Waits for exactly the next {@code n} events, failing after the timeout. */
  List<ChangeEvent> take(int n, Duration timeout) throws InterruptedException {
    List<ChangeEvent> taken = new ArrayList<>(n);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (taken.size() < n) {
      ChangeEvent e = events.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
      if (e == null) {
        throw new AssertionError("got " + taken.size() + " of " + n + " events: " + taken);
      }
      taken.add(e);
    }
    return taken;
  }

  /** Returns the events queued now, without waiting. */
  List<ChangeEvent> drain() {
    List<ChangeEvent> rest = new ArrayList<>();
    events.drainTo(rest);
    return rest;
  }
}
