package io.datum.cdc.core.delivery;

/**
 * What a source's runtime needs of the threads that call the handler, one ({@link HandlerThread})
 * or several ({@link ParallelDelivery}).
 */
public interface Delivery {

  /** Starts the threads. */
  void start();

  /**
   * Returns the number of the stream's change events the handler returned from (a snapshot's read
   * rows and resets not counted).
   */
  long eventsHandled();

  /**
   * Returns when the handler last returned from an event, as {@link HandlerThread#lastHandledNanos}
   * (the latest over the threads).
   *
   * @return a {@link System#nanoTime()} value, or 0 if none was handled yet
   */
  long lastHandledNanos();

  /**
   * Returns true if {@code thread} is one of the threads that call the handler.
   *
   * @param thread a thread, not null
   */
  boolean isHandlerThread(Thread thread);

  /**
   * Drops the events handed out but not taken by a handler thread yet (at a reconnect: the server
   * sends their transactions again). Events being handled are finished.
   */
  void clear();

  /**
   * Returns the events waiting for each handler thread, one element per thread; for one thread the
   * events in the hand-off.
   */
  int[] queueDepths();

  /**
   * Returns when the oldest event waiting for a handler thread was taken from the hand-off (0 if
   * none waits, and always with one thread, whose waiting events are the hand-off's).
   *
   * @return a {@link System#nanoTime()} value, or 0
   */
  long oldestWaitingNanos();
}
