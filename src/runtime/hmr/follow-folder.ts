// Watch mode: the watcher follows a root's plugin folders, each batch of file changes is one reload
// of the changed files, and the watcher then follows the paths the new generation reads.

import type { Logger } from '../base/logger.js'
import type { GenerationStore } from '../generations/generation-store.js'
import type { DisposableScope } from '../plugins/scope.js'
import type { FolderSource } from './folder-source.js'
import { createWatcher } from './watcher.js'

export interface FollowFolderOptions {
  readonly source: FolderSource
  readonly generations: GenerationStore
  /** Disposes the watcher and the loaded feature files. */
  readonly scope: DisposableScope
  readonly logger: Logger
  readonly debounceMs: number | undefined
  /** Whether the root has closed: a batch after that reloads nothing. */
  readonly closed: () => boolean
}

/** Starts following `source`; resolves once the watcher is ready. */
export async function followFolder({ source, generations, scope, logger, debounceMs, closed }: FollowFolderOptions): Promise<void> {
  const watcher = createWatcher({
    debounceMs,
    onBatch: async (changed) => {
      if (closed()) return
      await generations.reload({ changed, skipUnchanged: true }).catch((error: unknown) => {
        if (!closed()) logger.warn('reload after a file change failed', { error: String(error) })
      })
      watcher.setPaths(source.watchPaths())
    },
    onError: (error) => logger.warn('watcher error', { error: String(error) }),
  })
  scope.add(() => watcher.close(), 'watcher')
  scope.add(() => source.dispose(), 'feature files')
  watcher.setPaths(source.watchPaths())
  await watcher.ready
}
