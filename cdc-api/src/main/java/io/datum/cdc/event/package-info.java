/**
 * The change-event model: what a source delivers to the application's {@link
 * io.datum.cdc.event.CdcHandler} for each committed change.
 */
package io.datum.cdc.event;
