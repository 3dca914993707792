package io.datum.cdc.event;

import io.datum.cdc.CdcCheckpointHandle;

/**
 * The application's code that receives change events, one at a time, in commit order, on a thread
 * of the source that is not the one reading from PostgreSQL. With more than one handler thread
 * ({@code handlerThreads} of the source's builder), {@link #handle} is called from several threads
 * at once, each event of one ordering unit (a row, a table or a transaction) after the one before
 * it: the handler must then be thread-safe.
 *
 * <p>Acknowledge each event with {@code checkpoints.acknowledge(event.offset())} once it is durably
 * processed, now or later, from any thread. Events not acknowledged when the process dies are
 * delivered again after a restart.
 */
@FunctionalInterface
public interface CdcHandler {

  /**
   * Handles one event.
   *
   * @param event the event, not null
   * @param checkpoints the handle to acknowledge events with, not null
   * @throws Exception to stop the source; the event is not acknowledged and is delivered again when
   *     a source is started on the same slot and store
   */
  void handle(ChangeEvent event, CdcCheckpointHandle checkpoints) throws Exception;

  /**
   * Ends a batch: called on a handler thread after it handled at least one event since the last
   * call, when no event waits for that thread, before and after an event that must be handled alone
   * (a {@code TRUNCATE} or a logical decoding message, with more than one handler thread: on every
   * thread, so that what each thread holds is committed before it runs), and when the source stops.
   * A handler that writes events in batches commits its batch here (and acknowledges its events);
   * one that finishes each event in {@link #handle} ignores it. With more than one handler thread,
   * each thread calls it for the events it was handed. The default does nothing.
   *
   * @param checkpoints the handle to acknowledge events with, not null
   * @throws Exception to stop the source, as {@link #handle} does; the batch's unacknowledged
   *     events are delivered again after a restart
   */
  default void batchEnd(CdcCheckpointHandle checkpoints) throws Exception {}
}
