import { useState } from "react"
import { Button } from "@/components/ui/button"
import { Copy, Check, Quote, FileDown, Library } from "lucide-react"

// Under an answer: copy it as markdown (its links made absolute, so they work where it is pasted), download its
// sources as BibTeX, and the whole conversation as markdown or as a reading list (BibTeX of every paper its answers
// showed). Props come from the server; a download is used only when it is a path of this site.
function sitePath(value) {
  return typeof value === "string" && value.startsWith("/") && !value.startsWith("//") && !value.includes("\\") ? value : null
}

export default function AnswerActions() {
  const [copied, setCopied] = useState(null)
  const bib = sitePath(props.bibPath)
  const thread = sitePath(props.threadPath)
  const text = String(props.markdown || "").replace(/\]\((\/(?!\/))/g, "](" + window.location.origin + "$1")
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setCopied("yes")
    } catch (error) {
      setCopied("manual") // no clipboard here (plain http on another host): show the text to copy by hand
    }
  }
  return (
    <div className="answer-actions flex flex-col gap-2 my-1">
      <div className="flex flex-wrap gap-2">
        <Button size="sm" variant="outline" className="answer-copy" onClick={copy}>
          {copied === "yes" ? <Check className="h-4 w-4 mr-1" /> : <Copy className="h-4 w-4 mr-1" />}
          {copied === "yes" ? "Copied" : "Copy as markdown"}
        </Button>
        {bib ? <Button size="sm" variant="outline" className="answer-bibtex" asChild><a href={bib} download="sources.bib"><Quote className="h-4 w-4 mr-1" />Sources as BibTeX</a></Button> : null}
        {thread ? <Button size="sm" variant="ghost" className="thread-markdown" asChild><a href={thread + ".md"} download><FileDown className="h-4 w-4 mr-1" />Conversation (.md)</a></Button> : null}
        {thread ? <Button size="sm" variant="ghost" className="thread-reading-list" asChild><a href={thread + ".bib"} download><Library className="h-4 w-4 mr-1" />Reading list (.bib)</a></Button> : null}
      </div>
      {props.mode ? <div className="answer-mode text-xs opacity-70" title={String(props.why || "")}>Answered in {String(props.mode)} mode{props.why ? ": " + String(props.why) : ""}</div> : null}
      {copied === "manual" ? <textarea className="answer-markdown border rounded p-2 text-sm" readOnly rows={8} value={text} aria-label="The answer as markdown" /> : null}
    </div>
  )
}
