package io.datum.cdc.core.delivery;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.event.ChangeEvent;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Where a source's two producers of events meet before the {@link Handoff}: the stream (committed
 * changes in commit order, from the replication thread's assembler) and the snapshots (read rows,
 * from the initial snapshot's readers before streaming starts, and from online snapshot chunks
 * released at their high watermark). One offer pattern for both: offer, wait up to {@value
 * #WAIT_MILLIS} ms for room, else report the hand-off full so that the caller keeps the walsender
 * alive and tries again. Used by the replication thread only (the initial snapshot's readers hand
 * their chunks to that thread, which delivers them through {@link #deliverAll}).
 *
 * <p>Every stream event passes the {@link StreamObserver} before it is offered (once, or again
 * while the observer holds the stream at it): the snapshot code takes its own events out (watermark
 * and request messages), releases read rows that must go before the next stream event (holding the
 * stream where a table without a key is read whole), and sees every other event to find the rows it
 * supersedes. The stream side knows nothing of snapshots beyond that.
 */
public final class Merge {

  /** How long one offer waits for room in the hand-off. */
  static final long WAIT_MILLIS = 50;

  /** The stream's committed events, one at a time (the replication thread's assembler). */
  public interface EventQueue {
    /**
     * Returns the next event without removing it.
     *
     * @return the event, or null if none is ready
     */
    ChangeEvent peek();

    /** Removes the event {@link #peek} returned. */
    void poll();
  }

  /** What the observer decided about a stream event. */
  public enum Verdict {
    /** Offer it (after the read rows released, if any). */
    DELIVER,
    /** Do not deliver it: the merge acknowledges it (datum-cdc's own message). */
    TAKE_OUT,
    /**
     * Not yet: the stream holds at this event (rows that go before it are still being read); the
     * merge steps again after keeping the walsender alive, and shows the event again.
     */
    HOLD
  }

  /** Sees each stream event before it is offered: once, or until it stops holding it. */
  public interface StreamObserver {
    /**
     * Looks at a stream event.
     *
     * @param event the next stream event, not null
     * @param release takes read rows to hand off before this event and everything after it, in
     *     order
     * @return what to do with the event; after {@link Verdict#HOLD} the event is shown again
     * @throws InterruptedException if interrupted while holding
     */
    Verdict observe(ChangeEvent event, Consumer<ChangeEvent> release) throws InterruptedException;

    /** Delivers every event. */
    StreamObserver NONE = (event, release) -> Verdict.DELIVER;
  }

  /** What a {@link #step} did. */
  public enum Step {
    /** An event was handed off or taken out. */
    PROGRESS,
    /**
     * The hand-off stayed full for a whole wait, or the observer holds the stream: keep the stream
     * alive, then step again.
     */
    FULL,
    /** No event is ready: read more of the stream. */
    EMPTY
  }

  private final Handoff handoff;
  private final Consumer<CdcOffset> acknowledgeTakenOut;
  private final ArrayDeque<ChangeEvent> released = new ArrayDeque<>();
  private StreamObserver observer = StreamObserver.NONE;

  /** The stream event the observer saw last (it is offered again while the hand-off is full). */
  private ChangeEvent observed;

  /**
   * @param handoff the hand-off to the handler thread
   * @param acknowledgeTakenOut acknowledges a stream event the observer took out (it still counts
   *     in its transaction, so the watermark can pass it)
   */
  public Merge(Handoff handoff, Consumer<CdcOffset> acknowledgeTakenOut) {
    this.handoff = Objects.requireNonNull(handoff, "handoff");
    this.acknowledgeTakenOut = Objects.requireNonNull(acknowledgeTakenOut, "acknowledgeTakenOut");
  }

  /**
   * Sets the observer of the stream (the snapshots of the source); by default none.
   *
   * @param observer the observer, not null
   */
  public void observer(StreamObserver observer) {
    this.observer = Objects.requireNonNull(observer, "observer");
  }

  /**
   * Hands off the next event: a released read row first, else the stream's next event once the
   * observer saw it.
   *
   * @param stream the stream's events
   * @return what happened
   * @throws InterruptedException if interrupted while waiting for room
   */
  public Step step(EventQueue stream) throws InterruptedException {
    ChangeEvent read = released.peekFirst();
    if (read != null) {
      if (!offer(read)) {
        return Step.FULL;
      }
      released.removeFirst();
      return Step.PROGRESS;
    }
    ChangeEvent next = stream.peek();
    if (next == null) {
      return Step.EMPTY;
    }
    if (next != observed) {
      Verdict verdict = observer.observe(next, released::addLast);
      if (verdict == Verdict.HOLD) {
        return released.isEmpty() ? Step.FULL : Step.PROGRESS; // rows first; next is shown again
      }
      observed = next;
      if (verdict == Verdict.TAKE_OUT) {
        acknowledgeTakenOut.accept(next.offset());
        stream.poll();
        return Step.PROGRESS;
      }
      if (!released.isEmpty()) {
        return Step.PROGRESS; // the rows released go first; next is offered after them
      }
    }
    if (!offer(next)) {
      return Step.FULL;
    }
    stream.poll();
    return Step.PROGRESS;
  }

  /**
   * Hands off events in order, waiting for room as long as it takes (the initial snapshot's chunks
   * before streaming starts: there is no stream to keep alive yet).
   *
   * @param events the events
   * @param stopping true once the source stops
   * @throws InterruptedException if interrupted, or if the source stops before all were handed off
   */
  public void deliverAll(List<? extends ChangeEvent> events, BooleanSupplier stopping)
      throws InterruptedException {
    for (ChangeEvent e : events) {
      while (!offer(e)) {
        if (stopping.getAsBoolean()) {
          throw new InterruptedException("the source is stopping");
        }
      }
    }
  }

  /** Returns true if no released row waits and the hand-off is empty. */
  public boolean isIdle() {
    return released.isEmpty() && handoff.isEmpty();
  }

  private boolean offer(ChangeEvent event) throws InterruptedException {
    return handoff.offer(event) || handoff.offer(event, WAIT_MILLIS);
  }
}
