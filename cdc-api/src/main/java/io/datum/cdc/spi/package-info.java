/**
 * The service-provider interface that checkpoint-store plugins implement and build on. Applications
 * use {@link io.datum.cdc.CheckpointStores} instead.
 *
 * <p>A plugin registers a {@link io.datum.cdc.CheckpointStoreProvider} for its URI scheme. Its
 * store can extend {@link io.datum.cdc.spi.AbstractCheckpointStore}, which owns the lifecycle,
 * group commit ({@link io.datum.cdc.spi.GroupCommit}) and the encoding ({@link
 * io.datum.cdc.spi.CheckpointCodec}), so that the store only reads and writes bytes per slot; a
 * store that keeps files takes a {@link io.datum.cdc.spi.StoreLock} and uses {@link
 * io.datum.cdc.spi.StoreFiles} for durable directory entries. docs/stores.md is the guide.
 */
package io.datum.cdc.spi;
