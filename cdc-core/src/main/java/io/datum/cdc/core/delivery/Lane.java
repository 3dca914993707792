package io.datum.cdc.core.delivery;

/**
 * The bounded FIFO queue of one handler thread of a {@link ParallelDelivery}: the dispatcher puts
 * items (events, or the {@link ParallelDelivery.Gate} of an event several lanes wait for), the
 * lane's thread takes them. Remembers when each item was put, for the oldest waiting item's age.
 * Thread-safe (one monitor; one producer and one consumer in practice).
 */
final class Lane {

  private final Object[] items;
  private final long[] putNanos;
  private int head;
  private int count;

  /**
   * @param capacity the items it holds, at least 1
   */
  Lane(int capacity) {
    this.items = new Object[capacity];
    this.putNanos = new long[capacity];
  }

  /**
   * Adds an item, waiting for room up to a timeout.
   *
   * @param item the item, not null
   * @param nanos when it was taken from the hand-off ({@link System#nanoTime()})
   * @param timeoutMillis the longest wait
   * @return true if added, false if the lane stayed full
   * @throws InterruptedException if interrupted while waiting
   */
  synchronized boolean offer(Object item, long nanos, long timeoutMillis)
      throws InterruptedException {
    if (count == items.length) {
      wait(timeoutMillis);
      if (count == items.length) {
        return false;
      }
    }
    int tail = (head + count) % items.length;
    items[tail] = item;
    putNanos[tail] = nanos;
    count++;
    notifyAll();
    return true;
  }

  /**
   * Adds an item if there is room, without waking the lane's thread ({@link #signal} does, once for
   * a batch of items).
   *
   * @param item the item, not null
   * @param nanos when it was taken from the hand-off ({@link System#nanoTime()})
   * @return true if added, false if the lane is full
   */
  synchronized boolean add(Object item, long nanos) {
    if (count == items.length) {
      return false;
    }
    int tail = (head + count) % items.length;
    items[tail] = item;
    putNanos[tail] = nanos;
    count++;
    return true;
  }

  /** Wakes the lane's thread if it waits for items. */
  synchronized void signal() {
    if (count > 0) {
      notifyAll();
    }
  }

  /**
   * Takes the oldest item, waiting up to a timeout.
   *
   * @param timeoutMillis the longest wait; 0 does not wait
   * @return the item, or null if none came
   * @throws InterruptedException if interrupted while waiting
   */
  synchronized Object poll(long timeoutMillis) throws InterruptedException {
    if (count == 0) {
      if (timeoutMillis == 0) {
        return null;
      }
      wait(timeoutMillis);
      if (count == 0) {
        return null;
      }
    }
    Object item = items[head];
    items[head] = null;
    head = (head + 1) % items.length;
    if (count-- == items.length) {
      notifyAll(); // the dispatcher may wait for room
    }
    return item;
  }

  /** Returns the number of items waiting. */
  synchronized int size() {
    return count;
  }

  /** Returns when the oldest waiting item was taken from the hand-off, or 0 if none waits. */
  synchronized long oldestNanos() {
    return count == 0 ? 0 : putNanos[head];
  }

  /**
   * Drops the waiting events, keeping the gates (the other lanes of a gate wait for this lane to
   * reach it).
   *
   * @return how many events were dropped
   */
  synchronized int dropEvents() {
    int kept = 0;
    int dropped = 0;
    Object[] keep = new Object[count];
    long[] keepNanos = new long[count];
    for (int k = 0; k < count; k++) {
      int i = (head + k) % items.length;
      if (items[i] instanceof ParallelDelivery.Gate) {
        keep[kept] = items[i];
        keepNanos[kept++] = putNanos[i];
      } else {
        dropped++;
      }
      items[i] = null;
    }
    head = 0;
    count = kept;
    System.arraycopy(keep, 0, items, 0, kept);
    System.arraycopy(keepNanos, 0, putNanos, 0, kept);
    notifyAll();
    return dropped;
  }
}
