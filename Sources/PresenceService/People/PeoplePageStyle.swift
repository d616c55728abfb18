extension PeoplePage {
    /// `/people.css`.
    static let style = #"""
        * { box-sizing: border-box; }
        body { margin: 0; font: 14px/1.4 system-ui, "DejaVu Sans", sans-serif; color: #1f2328; background: #f6f8fa; }
        header { display: flex; gap: 16px; align-items: center; padding: 12px 20px; background: #fff;
          border-bottom: 1px solid #d0d7de; position: sticky; top: 0; }
        h1 { font-size: 18px; margin: 0; }
        #search { flex: 1; max-width: 420px; padding: 6px 10px; font-size: 14px; border: 1px solid #d0d7de;
          border-radius: 6px; }
        #summary { color: #57606a; }
        .connection { color: #8a8a8a; }
        .connection.live { color: #2e9e44; }
        main { display: grid; grid-template-columns: 1fr 300px; gap: 16px; padding: 16px 20px;
          height: calc(100vh - 58px); }
        #people { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; overflow: hidden;
          display: flex; flex-direction: column; }
        #viewport { flex: 1; overflow-y: auto; position: relative; }
        #rows { position: absolute; top: 0; left: 0; right: 0; }
        .row { position: absolute; left: 0; right: 0; height: 36px; display: grid;
          grid-template-columns: 20px 220px 1fr 150px; gap: 8px; align-items: center; padding: 0 12px;
          border-bottom: 1px solid #eaeef2; white-space: nowrap; }
        .row.group { background: #f6f8fa; font-weight: 600; color: #57606a; grid-template-columns: 1fr; }
        .name { overflow: hidden; text-overflow: ellipsis; }
        .name small { color: #8c959f; }
        .status { overflow: hidden; text-overflow: ellipsis; color: #424a53; }
        .attendance { color: #57606a; font-size: 12px; text-align: right; }
        .dot { width: 12px; height: 12px; border-radius: 50%; display: inline-block; }
        .dot.available { background: #2e9e44; } .dot.chat { background: #1f9d55; }
        .dot.away { background: #e0a100; } .dot.xa { background: #d97706; } .dot.dnd { background: #d0312d; }
        .dot.offline { background: #8a8a8a; } .dot.unknown { background: #fff; border: 2px solid #c4c4c4; }
        .dot.lost { background: #7e57c2; }
        #empty { padding: 20px; color: #57606a; }
        aside { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; padding: 12px 16px; overflow-y: auto; }
        aside h2 { font-size: 15px; margin: 0 0 8px; } aside h3 { font-size: 13px; margin: 16px 0 6px; color: #57606a; }
        dl { display: grid; grid-template-columns: 1fr auto; gap: 2px 12px; margin: 0; }
        dt { color: #57606a; } dd { margin: 0; text-align: right; font-variant-numeric: tabular-nums; }
        ol { padding-left: 18px; margin: 0; font-size: 12px; color: #424a53; }
        ol:empty::before { content: "none"; margin-left: -18px; }
        .note { font-size: 12px; color: #8c959f; margin-top: 16px; }
        """#
}
