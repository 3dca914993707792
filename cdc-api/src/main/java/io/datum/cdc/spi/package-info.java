/**
 * The service-provider interface that checkpoint-store plugins implement. Applications use {@link
 * io.datum.cdc.CheckpointStores} instead.
 */
package io.datum.cdc.spi;
