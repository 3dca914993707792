package io.datum.cdc.core.delivery;

import io.datum.cdc.event.ChangeEvent;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The bounded queue between a source's replication thread, which offers events in commit order, and
 * its handler thread, which takes them. Its capacity bounds the events decoded ahead of the
 * handler; when it is full the replication thread stops reading (but keeps the walsender alive).
 * Thread-safe.
 */
public final class Handoff {

  private final ArrayBlockingQueue<ChangeEvent> queue;

  /**
   * @param capacity the events it holds, at least 1
   * @throws IllegalArgumentException if {@code capacity} is below 1
   */
  public Handoff(int capacity) {
    this.queue = new ArrayBlockingQueue<>(capacity);
  }

  /**
   * Adds an event if there is room.
   *
   * @param event the next event, not null
   * @return true if it was added
   */
  public boolean offer(ChangeEvent event) {
    return queue.offer(event);
  }

  /**
   * Adds an event, waiting for room up to a timeout.
   *
   * @param event the next event, not null
   * @param timeoutMillis the longest wait in milliseconds
   * @return true if it was added, false if the handler took nothing meanwhile
   * @throws InterruptedException if interrupted while waiting
   */
  public boolean offer(ChangeEvent event, long timeoutMillis) throws InterruptedException {
    return queue.offer(event, timeoutMillis, TimeUnit.MILLISECONDS);
  }

  /**
   * Takes the oldest event, waiting up to a timeout.
   *
   * @param timeoutMillis the longest wait in milliseconds
   * @return the event, or null if none came
   * @throws InterruptedException if interrupted while waiting
   */
  public ChangeEvent poll(long timeoutMillis) throws InterruptedException {
    return queue.poll(timeoutMillis, TimeUnit.MILLISECONDS);
  }

  /**
   * Moves up to {@code max} waiting events, oldest first, into {@code into}, without waiting.
   *
   * @param into receives the events
   * @param max the most events to move
   * @return how many were moved
   */
  public int drainTo(java.util.Collection<? super ChangeEvent> into, int max) {
    return queue.drainTo(into, max);
  }

  /** Returns the number of events queued now. */
  public int size() {
    return queue.size();
  }

  /** Returns true if no event waits for the handler. */
  public boolean isEmpty() {
    return queue.isEmpty();
  }

  /**
   * Drops every waiting event (at a reconnect: the server sends their transactions again, and their
   * unacknowledged events are delivered again).
   */
  public void clear() {
    queue.clear();
  }
}
