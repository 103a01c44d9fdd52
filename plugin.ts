import { definePlugin } from 'seam-runtime/plugin-runtime'
import { fsToken, workspaceFs, workspaceRootToken } from './tools/lib/fs-seam.js'
import { workspaceGuard } from './tools/lib/guard.js'

/**
 * The repository's own plugin: workspace tools (`tools/*.ts`) over a filesystem seam. It provides the
 * confined provider, and owns the policy around it: a monotonic guard that keeps every path argument
 * inside the workspace root (`write_file` itself asks before it overwrites a file, through `risk`).
 * The root is `SEAM_WORKSPACE`, else this plugin's folder, else the working folder.
 */
export default definePlugin({
  name: 'workspace',
  setup(ctx) {
    const fs = workspaceFs(process.env.SEAM_WORKSPACE || ctx.dir || process.cwd())
    ctx.resources.provide(workspaceRootToken, fs.root)
    ctx.resources.provide(fsToken, fs, () => fs.dispose())
    // Tool names as the model sees them: `<child>__read_file` when this plugin is mounted below the root.
    const qualify = (name: string) => [...ctx.owner.split('/').slice(1), name].join('__')
    ctx.guards.add(workspaceGuard(fs.root, qualify))
    ctx.log.info('workspace root', { root: fs.root })
  },
})
