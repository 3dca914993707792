package io.datum.cdc.core.delivery;

import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.CdcException;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.MessageEvent;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.event.TruncateEvent;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The body of a source's handler thread: takes events from the {@link Handoff} in order and calls
 * the application's {@link CdcHandler} with each, on this one thread, until the source stops or the
 * replication thread is done and the hand-off is empty. A handler that throws fails the source (the
 * event is not acknowledged, so it is delivered again after a restart).
 */
public final class HandlerThread implements Runnable, Delivery {

  /** How long one poll of the hand-off waits before the stop conditions are looked at again. */
  private static final long POLL_MILLIS = 20;

  private final Handoff handoff;
  private final CdcHandler handler;
  private final CdcCheckpointHandle handle;
  private final BooleanSupplier stopping;
  private final BooleanSupplier producerDone;
  private final Consumer<Throwable> onFailure;
  private final Runnable onExit;
  private final AtomicLong eventsHandled = new AtomicLong();
  private final String threadName;
  private volatile Thread thread;

  /**
   * {@link System#nanoTime()} after the handler returned from the last event of a transaction or
   * from every {@value #STAMP_EVERY}th event of one; 0 before that.
   */
  private volatile long lastHandledNanos;

  /** Events of a large transaction between two stamps of {@link #lastHandledNanos}. */
  static final int STAMP_EVERY = 1024;

  /**
   * @param handoff where the events come from
   * @param handler the application's handler
   * @param handle the checkpoint handle passed with every event
   * @param stopping true once the source stops: the thread ends without taking more events
   * @param producerDone true once the replication thread has ended for good (after its last
   *     reconnect attempt): the thread ends when the hand-off is empty
   * @param onFailure told about a handler failure (fails the source)
   * @param onExit run when the thread ends, however it ends
   * @param threadName the name of the thread {@link #start} starts
   */
  public HandlerThread(
      Handoff handoff,
      CdcHandler handler,
      CdcCheckpointHandle handle,
      BooleanSupplier stopping,
      BooleanSupplier producerDone,
      Consumer<Throwable> onFailure,
      Runnable onExit,
      String threadName) {
    this.threadName = threadName;
    this.handoff = handoff;
    this.handler = handler;
    this.handle = handle;
    this.stopping = stopping;
    this.producerDone = producerDone;
    this.onFailure = onFailure;
    this.onExit = onExit;
  }

  /**
   * Returns when the handler last returned from an event, stamped once per transaction (at its last
   * event) and every {@value #STAMP_EVERY} events of a large one, so at most one clock read per
   * transaction or per {@value #STAMP_EVERY} events.
   *
   * @return a {@link System#nanoTime()} value, or 0 if no event was handled yet
   */
  public long lastHandledNanos() {
    return lastHandledNanos;
  }

  /**
   * Returns the number of the stream's change events the handler returned from: a snapshot's {@link
   * ReadEvent}s and resets are not counted (the snapshot's own figures count them), so this and the
   * watermark's acknowledged count mean the same events in every phase.
   */
  public long eventsHandled() {
    return eventsHandled.get();
  }

  @Override
  public void start() {
    Thread t = new Thread(this, threadName);
    thread = t;
    t.start();
  }

  @Override
  public boolean isHandlerThread(Thread t) {
    return t == thread;
  }

  @Override
  public void clear() {
    handoff.clear();
  }

  @Override
  public int[] queueDepths() {
    return new int[] {handoff.size()};
  }

  @Override
  public long oldestWaitingNanos() {
    return 0;
  }

  @Override
  public void run() {
    ChangeEvent event = null;
    boolean batchOpen = false;
    try {
      while (!stopping.getAsBoolean()) {
        event = handoff.poll(0);
        if (event == null) {
          if (batchOpen) {
            batchOpen = false;
            handler.batchEnd(handle);
            continue;
          }
          event = handoff.poll(POLL_MILLIS);
        }
        if (event == null) {
          if (producerDone.getAsBoolean()) {
            break;
          }
          continue;
        }
        if (stopping.getAsBoolean()) {
          event = null; // not handled: a failure of the batchEnd below is not this event's
          break;
        }
        boolean alone = event instanceof TruncateEvent || event instanceof MessageEvent;
        if (alone && batchOpen) {
          batchOpen = false;
          handler.batchEnd(handle); // a TRUNCATE or message is a batch of its own, as with more
        }
        handler.handle(event, handle);
        batchOpen = true;
        if (isStreamChange(event)) {
          eventsHandled.incrementAndGet();
        }
        if (stampsAfter(event)) {
          lastHandledNanos = System.nanoTime();
        }
        event = null;
        if (alone) {
          batchOpen = false;
          handler.batchEnd(handle);
        }
      }
      if (batchOpen) {
        handler.batchEnd(handle);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Throwable t) {
      onFailure.accept(failure(event, "", t));
    } finally {
      onExit.run();
    }
  }

  /**
   * Whether an event counts in {@link #eventsHandled}: a change of the stream, not a snapshot's
   * read row or reset.
   */
  static boolean isStreamChange(ChangeEvent event) {
    return !(event instanceof ReadEvent)
        && !(event instanceof TruncateEvent t && t.isSnapshotReset());
  }

  /**
   * Whether returning from an event stamps {@link #lastHandledNanos}: a transaction's last event,
   * and every {@value #STAMP_EVERY}th of a large one.
   */
  static boolean stampsAfter(ChangeEvent event) {
    io.datum.cdc.CdcOffset offset = event.offset();
    int index = offset.eventIndex();
    return index == offset.eventCount() - 1 || index % STAMP_EVERY == STAMP_EVERY - 1;
  }

  /**
   * The failure a handler's exception fails the source with.
   *
   * @param event the event the handler failed on, or null if it failed ending a batch
   * @param where where it ran, for the message ("" or " on handler thread 3")
   * @param t what the handler threw
   */
  static CdcException failure(ChangeEvent event, String where, Throwable t) {
    return new CdcException(
        (event == null
                ? "handler failed ending a batch (batchEnd)" + where
                : "handler failed on event " + event.offset() + where)
            + ": "
            + t,
        t);
  }
}
