import type { CatalogView, ResourceView, SkillView, ToolView } from '../../types.js'
import { api } from '../client.js'
import { badge, h, replace } from '../dom.js'
import { markdown } from '../markdown.js'
import { schemaView } from '../schema-view.js'
import type { View, ViewContext } from './view.js'

/** Every tool and skill of one generation (the live one unless named). */
export function catalogView(_context: ViewContext, generation: number | undefined): View {
  const body = h('div', null, h('p', { class: 'muted' }, 'loading…'))
  const element = h('div', null, h('h1', null, 'Catalog'), body)
  const render = (catalog: CatalogView) =>
    replace(
      body,
      h('p', null, `generation ${catalog.generation} `, catalog.live ? badge('live', 'ok') : badge('snapshot at publish')),
      h('h2', null, `Tools (${catalog.tools.length})`),
      catalog.tools.map((tool) => toolView(tool, catalog.defaultTimeoutMs)),
      h('h2', null, `Skills (${catalog.skills.length})`),
      catalog.skills.length === 0 ? h('p', { class: 'muted' }, 'no skills') : catalog.skills.map(skillView),
      h('h2', null, `Resources (${(catalog.resources ?? []).length})`),
      (catalog.resources ?? []).length === 0 ? h('p', { class: 'muted' }, 'no resources') : catalog.resources.map(resourceView),
    )
  const refresh = () => api.catalog(generation).then(render, (error: Error) => replace(body, h('p', { class: 'error' }, error.message)))
  void refresh()
  return {
    element,
    onEvent(event) {
      if (event.type === 'generation' && generation === undefined) void refresh()
    },
  }
}

function toolView(tool: ToolView, defaultTimeoutMs: number): HTMLElement {
  return h(
    'article',
    { class: 'card', id: `tool-${tool.name}`, 'aria-labelledby': `tool-${tool.name}-name` },
    h('h3', { id: `tool-${tool.name}-name` }, h('code', null, tool.name)),
    h('p', null, tool.description),
    h(
      'dl',
      { class: 'facts' },
      fact('source', h('code', null, tool.source)),
      fact('owner', tool.owner),
      fact('approval', [badge(tool.approval, tool.approval === 'never' ? 'muted' : 'warn'), ` ${tool.approvalMeaning}`]),
      fact('concurrency', tool.concurrency),
      fact('timeout', tool.timeoutMs === undefined ? [`${defaultTimeoutMs} ms `, h('span', { class: 'muted' }, '(the root default)')] : `${tool.timeoutMs} ms`),
      tool.permissions.length > 0 ? fact('permissions', tool.permissions.join(', ')) : null,
      tool.readOnly !== undefined || tool.destructive !== undefined
        ? fact('hints', [tool.readOnly ? 'read-only ' : '', tool.destructive ? 'destructive' : ''].join(''))
        : null,
    ),
    schemaView(tool.input, 'input'),
    tool.output !== undefined ? schemaView(tool.output, 'output') : null,
    h('p', null, h('a', { href: `#/try/${encodeURIComponent(tool.name)}` }, `Try ${tool.name}`)),
  )
}

function skillView(skill: SkillView): HTMLElement {
  return h(
    'article',
    { class: 'card', 'aria-label': `skill ${skill.name}` },
    h('h3', null, skill.name),
    h('p', null, skill.description),
    h(
      'dl',
      { class: 'facts' },
      fact('source', h('code', null, skill.source)),
      fact('owner', skill.owner),
      skill.tools.length > 0 ? fact('tools', skill.tools.join(', ')) : null,
      fact('always in prompt', skill.always ? 'yes' : 'no'),
    ),
    h('details', null, h('summary', null, 'instructions'), markdown(skill.instructions)),
  )
}

function resourceView(resource: ResourceView): HTMLElement {
  return h(
    'article',
    { class: 'card', 'aria-label': `resource ${resource.uri}` },
    h('h3', null, h('code', null, resource.uri), resource.template ? [' ', badge('template', 'muted')] : null),
    resource.title !== undefined || resource.description !== undefined ? h('p', null, [resource.title, resource.description].filter(Boolean).join(': ')) : null,
    h(
      'dl',
      { class: 'facts' },
      fact('name', resource.name),
      fact('source', h('code', null, resource.source)),
      fact('owner', resource.owner),
      resource.mimeType !== undefined ? fact('type', resource.mimeType) : null,
      resource.size !== undefined ? fact('size', `${resource.size} bytes`) : null,
    ),
  )
}

function fact(term: string, value: Parameters<typeof h>[2]): HTMLElement[] {
  return [h('dt', null, term), h('dd', null, value)]
}
