package io.datum.cdc.event;

import io.datum.cdc.CdcCheckpointHandle;

/**
 * The application's code that receives change events, one at a time, in commit order, on a thread
 * of the source that is not the one reading from PostgreSQL.
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
}
