extension DemoAssets {
    static let css = #"""
        :root { color-scheme: light; --ink: #1b1b1f; --muted: #4a4a55; --line: #c9c9d2; --accent: #0b57d0; --bg: #fafafb; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--ink); background: var(--bg); }
        header, main, footer { max-width: 64rem; margin: 0 auto; padding: 0 1rem; }
        header h1 { margin: 1rem 0 0; font-size: 1.6rem; }
        nav ul { display: flex; gap: 1rem; list-style: none; padding: 0; margin: .5rem 0 1rem; }
        a { color: var(--accent); }
        nav a[aria-current="page"] { font-weight: 700; text-decoration-thickness: 3px; }
        :focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        .skip { position: absolute; left: -999px; }
        .skip:focus { left: 1rem; top: 1rem; background: #fff; padding: .5rem; }
        form, [role="search"] { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .5rem 0; }
        input, select, button { font: inherit; padding: .35rem .5rem; border: 1px solid var(--muted); border-radius: 4px; background: #fff; color: var(--ink); }
        button { cursor: pointer; }
        .status { color: var(--muted); min-height: 1.5em; }
        .status.error { color: #a4000f; }
        .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: .5rem; list-style: none; padding: 0; }
        .grid img { width: 150px; height: 150px; object-fit: cover; display: block; background: #e6e6ea; }
        .grid a { display: block; overflow: hidden; overflow-wrap: anywhere; font-size: .85rem; }
        .list { list-style: none; padding: 0; }
        .list button { display: flex; gap: .75rem; align-items: center; width: 100%; text-align: left; margin: .25rem 0; }
        .list img { width: 100px; height: 100px; object-fit: cover; background: #e6e6ea; flex: none; }
        .episodes li { margin: 1rem 0; padding-bottom: 1rem; border-bottom: 1px solid var(--line); display: flow-root; }
        .episodes .thumb { float: left; width: 60px; height: 60px; margin: 0 .75rem .25rem 0; border-radius: 6px; background: #e6e6ea; }
        .episodes audio { width: 100%; }
        .notes { color: var(--muted); }
        .chapters { display: flex; flex-wrap: wrap; gap: .25rem; list-style: none; padding: 0; margin: .5rem 0; }
        .chapters button { font-size: .85rem; padding: .15rem .4rem; }
        .transcript { list-style: none; padding: 0; max-height: 20rem; overflow-y: auto; }
        .transcript time { color: var(--muted); font-variant-numeric: tabular-nums; }
        .tabs { display: flex; gap: .25rem; border-bottom: 1px solid var(--line); margin: .5rem 0; }
        .tabs [role="tab"] { border-radius: 4px 4px 0 0; border-bottom: none; margin-bottom: -1px; }
        .tabs [role="tab"][aria-selected="true"] { font-weight: 700; border-color: var(--accent); box-shadow: inset 0 3px var(--accent); }
        .hint { color: var(--muted); margin: .25rem 0; }
        .library-file { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .5rem 0; }
        .feeds { list-style: none; padding: 0; margin: .5rem 0; }
        .feeds li[data-status="error"] { color: #a4000f; }
        .episodes .podcast { font-weight: 600; }
        .cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); gap: 1rem; list-style: none; padding: 0; }
        .cards li { background: #fff; border: 1px solid var(--line); border-radius: 6px; overflow: hidden; }
        .cards img { width: 100%; aspect-ratio: 480 / 300; object-fit: cover; display: block; background: #e6e6ea; }
        .cards .body { padding: .5rem .75rem; }
        footer { color: var(--muted); font-size: .9rem; padding-bottom: 2rem; }

        """#
}
