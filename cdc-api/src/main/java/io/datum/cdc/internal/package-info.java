/** Implementation classes; not API, may change in any release. */
package io.datum.cdc.internal;
