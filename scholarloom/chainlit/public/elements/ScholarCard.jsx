import { Button } from "@/components/ui/button"
import { Badge } from "@/components/ui/badge"
import { BookOpen, Quote, MessagesSquare, ListTree, UserRound, Building2, FileText, Table, Network } from "lucide-react"

// A paper, researcher, institution, comparison-table or graph (a picture on a page) card. Props come from the server's catalog; links are used only when
// they are paths of this site (start with one "/"), so a card can never point elsewhere.
function sitePath(value) {
  return typeof value === "string" && value.startsWith("/") && !value.startsWith("//") && !value.includes("\\") ? value : null
}

const ICONS = { paper: FileText, researcher: UserRound, institution: Building2, compare: Table, graph: Network }

export default function ScholarCard() {
  const kind = props.kind || "paper"
  const Icon = ICONS[kind] || FileText
  const page = sitePath(props.path)
  const chat = sitePath(props.chatPath)
  const bib = sitePath(props.bibPath)
  const ask = (name) => callAction({ name, payload: { id: String(props.id), title: String(props.title || "") } })
  const open = (path) => { if (path) window.open(path, "_blank", "noopener") }
  return (
    <div className="scholar-card rounded-md border p-3 my-1 flex flex-col gap-2" data-kind={kind} data-id={String(props.id)}>
      <div className="flex items-start gap-2">
        <Icon className="h-4 w-4 mt-1 opacity-70 shrink-0" />
        <div className="flex flex-col">
          <div className="font-medium">
            {props.number ? <Badge variant="outline" className="mr-2">{props.number}</Badge> : null}
            {page ? <a href={page} target="_blank" rel="noopener" className="hover:underline">{props.title}</a> : props.title}
          </div>
          {props.subtitle ? <div className="text-sm opacity-70">{props.subtitle}</div> : null}
          {(props.quotes || []).slice(0, 2).map((q, i) => (
            <div key={i} className="text-sm italic opacity-80 border-l-2 pl-2 mt-1">{q}</div>
          ))}
        </div>
      </div>
      <div className="flex flex-wrap gap-2">
        {page ? <Button size="sm" variant="outline" className="card-open" onClick={() => open(page)}><BookOpen className="h-4 w-4 mr-1" />{kind === "compare" ? "Open as a page" : kind === "graph" ? "Open the picture" : "Open page"}</Button> : null}
        {kind === "paper" ? <Button size="sm" variant="outline" className="card-references" onClick={() => ask("show_references")}><ListTree className="h-4 w-4 mr-1" />References</Button> : null}
        {kind === "paper" ? <Button size="sm" variant="outline" className="card-cited-by" onClick={() => ask("show_cited_by")}><Quote className="h-4 w-4 mr-1" />Cited by</Button> : null}
        {kind === "paper" && bib ? <Button size="sm" variant="outline" className="card-cite" asChild><a href={bib} download><Quote className="h-4 w-4 mr-1" />Cite (BibTeX)</a></Button> : null}
        {kind === "paper" && chat ? <Button size="sm" variant="outline" className="card-chat" onClick={() => window.location.assign(chat)}><MessagesSquare className="h-4 w-4 mr-1" />Chat about this paper</Button> : null}
        {kind === "researcher" ? <Button size="sm" variant="outline" className="card-summary" onClick={() => ask("summarize_researcher")}><UserRound className="h-4 w-4 mr-1" />What they work on</Button> : null}
        {kind === "institution" ? <Button size="sm" variant="outline" className="card-summary" onClick={() => ask("summarize_institution")}><Building2 className="h-4 w-4 mr-1" />What they work on</Button> : null}
      </div>
    </div>
  )
}
