/**
 * A crash-safe {@link io.datum.cdc.CdcCheckpointStore} that keeps every slot's checkpoint in one
 * MapDB 3.1 file: {@link io.datum.cdc.store.mapdb.MapDbCheckpointStore}, URI {@code
 * mapdb:/var/lib/app/cdc.mapdb}.
 */
package io.datum.cdc.store.mapdb;
