package io.datum.cdc.core.delivery;

import io.datum.cdc.event.ChangeEvent;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The bounded queue between a source's replication thread, which offers events in commit order, and
 * its handler thread, which takes them. Its capacity bounds the events decoded ahead of the
 * handler; when it is full the replication thread stops reading (but keeps the walsender alive).
 * Thread-safe.
 *
 * <p>Wake-ups: a handler waiting on an empty queue is woken by the first event offered (latency). A
 * producer waiting on a full queue is woken only once the handler has taken half of it (or it was
 * cleared), not for each free place: with a producer faster than the handler (a snapshot's chunk
 * handed off at once), waking it per event would cost both threads a context switch per event.
 */
public final class Handoff {

  private final ChangeEvent[] ring;
  private final int resumeAt;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition notEmpty = lock.newCondition();
  private final Condition drained = lock.newCondition();
  private int head;
  private int count;
  private int producersWaiting;

  /**
   * @param capacity the events it holds, at least 1
   * @throws IllegalArgumentException if {@code capacity} is below 1
   */
  public Handoff(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1: " + capacity);
    }
    this.ring = new ChangeEvent[capacity];
    this.resumeAt = capacity / 2;
  }

  /**
   * Adds an event if there is room.
   *
   * @param event the next event, not null
   * @return true if it was added
   * @throws NullPointerException if {@code event} is null
   */
  public boolean offer(ChangeEvent event) {
    java.util.Objects.requireNonNull(event, "event");
    lock.lock();
    try {
      return add(event);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Adds an event, waiting for room up to a timeout; once the queue was full, room means the
   * handler took half of it (see the class comment).
   *
   * @param event the next event, not null
   * @param timeoutMillis the longest wait in milliseconds
   * @return true if it was added, false if the timeout passed first
   * @throws InterruptedException if interrupted while waiting
   * @throws NullPointerException if {@code event} is null
   */
  public boolean offer(ChangeEvent event, long timeoutMillis) throws InterruptedException {
    java.util.Objects.requireNonNull(event, "event");
    long nanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    lock.lockInterruptibly();
    try {
      if (count == ring.length) {
        producersWaiting++;
        try {
          while (count > resumeAt) {
            if (nanos <= 0) {
              return false;
            }
            nanos = drained.awaitNanos(nanos);
          }
        } finally {
          producersWaiting--;
        }
      }
      return add(event);
    } finally {
      lock.unlock();
    }
  }

  private boolean add(ChangeEvent event) {
    if (count == ring.length) {
      return false;
    }
    ring[(head + count) % ring.length] = event;
    if (count++ == 0) {
      notEmpty.signal();
    }
    return true;
  }

  /**
   * Takes the oldest event, waiting up to a timeout.
   *
   * @param timeoutMillis the longest wait in milliseconds; 0 or less does not wait
   * @return the event, or null if none came
   * @throws InterruptedException if interrupted while waiting
   */
  public ChangeEvent poll(long timeoutMillis) throws InterruptedException {
    long nanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    lock.lockInterruptibly();
    try {
      while (count == 0) {
        if (nanos <= 0) {
          return null;
        }
        nanos = notEmpty.awaitNanos(nanos);
      }
      return take();
    } finally {
      lock.unlock();
    }
  }

  private ChangeEvent take() {
    ChangeEvent event = ring[head];
    ring[head] = null;
    head = (head + 1) % ring.length;
    count--;
    if (producersWaiting > 0 && count == resumeAt) {
      drained.signalAll();
    }
    return event;
  }

  /**
   * Moves up to {@code max} waiting events, oldest first, into {@code into}, without waiting.
   *
   * @param into receives the events
   * @param max the most events to move
   * @return how many were moved
   */
  public int drainTo(Collection<? super ChangeEvent> into, int max) {
    lock.lock();
    try {
      int moved = 0;
      while (moved < max && count > 0) {
        into.add(take());
        moved++;
      }
      return moved;
    } finally {
      lock.unlock();
    }
  }

  /** Returns the number of events queued now. */
  public int size() {
    lock.lock();
    try {
      return count;
    } finally {
      lock.unlock();
    }
  }

  /** Returns true if no event waits for the handler. */
  public boolean isEmpty() {
    return size() == 0;
  }

  /**
   * Drops every waiting event (at a reconnect: the server sends their transactions again, and their
   * unacknowledged events are delivered again).
   */
  public void clear() {
    lock.lock();
    try {
      while (count > 0) {
        ring[head] = null;
        head = (head + 1) % ring.length;
        count--;
      }
      drained.signalAll();
    } finally {
      lock.unlock();
    }
  }
}
