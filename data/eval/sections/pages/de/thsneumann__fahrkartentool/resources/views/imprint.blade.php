@extends('layouts.master')

@section('content')

<div class="container">
    <h1>Impressum</h1>

    <p>Anbieter und Verantwortlicher dieser Internetpräsenz nach § 5 TMG, § 55 RStV ist die Stiftung Deutsches Technikmuseum Berlin (Landesunmittelbare rechtsfähige Stiftung des öffentlichen Rechts).</p>

    <p>
        Stiftung Deutsches Technikmuseum Berlin<br>
        Direktor Prof. Dr. Dirk Böndel<br>
        Trebbiner Straße 9, 10963 Berlin<br>
        Tel.: 030 / 90 254 0<br>
        <a href="mailto:info@sdtb.de">info@sdtb.de</a><br>
        USt-IdNr gemäß § 27a UStG: DE813348933
    </p>

    <h2>Inhaltlich Verantwortlicher gem. § 55 II RStV:</h2>

    <p>
        Direktion / Digitale Strategie<br>
        Bettina Gries<br>
        <a href="mailto:gries@sdtb.de">gries@sdtb.de</a>
    </p>

    <h2>Redaktion</h2>

    <p>
        Historisches Archiv: Marcel Ruhl<br>
        Digitale Strategie: Bettina Gries
    </p>

    <h2>Gestaltung / Umsetzung</h2>

    <p>
        Thomas Neumann (Programmierung)<br>
        Nastasja Keller und Yvonne Götzl (Animation &amp; Grafik)
    </p>

    <h2>Hinweis zu Nutzungsrechten</h2>

    <p>Das Fahrkartentool wurde in Laravel und VueJS geschrieben, ist auf <a href="http://github.com/thsneumann/fahrkartentool" target="_blank">Github</a> frei verfügbar und unter der <a href="https://www.gnu.org/licenses/gpl-3.0.en.html" target="_blank">GPL3</a> lizensiert.</p>
    <p>Die Grafiken und die Intro-Animation stehen unter der <a href="https://creativecommons.org/licenses/by-sa/3.0/de/" target="_blank">CC-BY-SA3.0 DE Lizenz</a> zur Verfügung.</p> 
    <p>Alle historischen Fahrkarten sind unter der <a href="https://creativecommons.org/licenses/by-sa/3.0/de/" target="_blank">CC-BY-SA4.0 DE Lizenz</a> verfügbar.</p> 
    <p>Alle Metadaten zu den Fahrkarten stehen unter der <a href="https://creativecommons.org/publicdomain/zero/1.0/deed.de" target="_blank">Lizenz CC0.</a></p> 

    <h2>Rechtliche Hinweise zur Haftung / Disclaimer</h2>

    <h3>1. Inhalt des Onlineangebots der Stiftung Deutsches Technikmuseum Berlin (SDTB)</h3>

    <p>Die Autoren (siehe Impressum) übernehmen keinerlei Gewähr für die Aktualität, Korrektheit, Vollständigkeit oder Qualität der bereitgestellten Informationen. Haftungsansprüche gegen die Autoren, welche sich auf Schäden materieller oder ideeller Art beziehen, die durch die Nutzung oder Nichtnutzung der dargebotenen Informationen bzw. durch die Nutzung fehlerhafter und unvollständiger Informationen verursacht wurden, sind grundsätzlich ausgeschlossen, sofern seitens der Autoren kein nachweislich vorsätzliches oder grob fahrlässiges Verschulden vorliegt.</p>
    <p>Alle Angebote sind freibleibend und unverbindlich. Die Autoren behalten es sich ausdrücklich vor, Teile der Seiten oder das gesamte Angebot ohne gesonderte Ankündigung zu verändern, zu ergänzen, zu löschen oder die Veröffentlichung zeitweise oder endgültig einzustellen.</p>

    <h3>2. Verweise und Links</h3>

    <p>Bei direkten oder indirekten Verweisen auf fremde Internetseiten ("Links"), die außerhalb des Verantwortungsbereichs der Autoren liegen, würde eine Haftungsverpflichtung ausschließlich in dem Fall in Kraft treten, in dem die Autoren von den Inhalten Kenntnis hatten und es ihnen technisch möglich und zumutbar wäre, die Nutzung im Falle rechtswidriger Inhalte zu verhindern.</p>
    <p>Die Autoren erklären daher ausdrücklich, dass zum Zeitpunkt der Linksetzung die entsprechenden verlinkten Seiten frei von illegalen Inhalten waren. Die Autoren haben keinerlei Einfluss auf die aktuelle und zukünftige Gestaltung und auf die Inhalte der gelinkten/verknüpften Seiten. Deshalb distanzieren sie sich hiermit ausdrücklich von allen Inhalten aller gelinkten/verknüpften Seiten, die nach der Linksetzung verändert wurden. Diese Feststellung gilt für alle innerhalb des eigenen Internetangebots gesetzten Links und Verweise sowie für Fremdeinträge in von den Autoren eingerichteten Gästebüchern, Diskussionsforen und Mailinglisten. Für illegale, fehlerhafte oder unvollständige Inhalte und insbesondere für Schäden, die aus der Nutzung oder Nichtnutzung solcherart dargebotener Informationen entstehen, haftet allein der Anbieter der Seite, auf welche verwiesen wurde, nicht derjenige, der über Links auf die jeweilige Veröffentlichung lediglich verweist.</p>

    <h3>3. Urheber- und Kennzeichenrecht</h3>

    <p>Die Autoren sind bestrebt, in allen Publikationen die Urheberrechte der verwendeten Grafiken, Tondokumente, Videosequenzen und Texte zu beachten, von ihr selbst erstellte Grafiken, Tondokumente, Videosequenzen und Texte zu nutzen oder auf lizenzfreie Grafiken, Tondokumente, Videosequenzen und Texte zurückzugreifen.</p>
    <p>Alle innerhalb des Internetangebots genannten und ggf. durch Dritte geschützten Marken- und Warenzeichen unterliegen uneingeschränkt den Bestimmungen des jeweils gültigen Kennzeichenrechts und den Besitzrechten der jeweiligen eingetragenen Eigentümer. Allein aufgrund der bloßen Nennung ist nicht der Schluß zu ziehen, dass Markenzeichen nicht durch Rechte Dritter geschützt sind!</p>
    <p>Das Copyright für veröffentlichte, von den Autoren selbst erstellte Objekte bleiben allein bei den Autoren der Seiten. Eine Vervielfältigung oder Verwendung solcher Grafiken, Tondokumente, Videosequenzen und Texte in anderen elektronischen oder gedruckten Publikationen ist ohne ausdrückliche Zustimmung der jeweiligen Autoren nicht gestattet.</p>

    <h3>4. Datenschutz</h3>

    <p>Bei der Nutzung unserer Internetangebote werden personenbezogene Daten erhoben und in Datenbanken, Protokolldateien oder anderen Systemen gespeichert. Bei der Verarbeitung der erfassten Daten werden die Datenschutzvorschriften von uns konsequent eingehalten.</p>
    <p>Bitte beachten Sie deshalb <a href="{{ route('privacy') }}">unsere Datenschutzerklärung.</a></p>

    <h3>5. Kommunikation per E-Mail</h3>

    <p>Die Kommunikation per E-Mail kann Sicherheitslücken aufweisen. E-Mails können auf dem Weg an die MitarbeiterInnen der Stiftung Deutsches Technikmuseum Berlin von versierten Internet-Nutzern aufgehalten und eingesehen werden. Sollte die Stiftung SDTB eine E-Mail von Ihnen erhalten, so wird davon ausgegangen, dass unsere MitarbeiterInnen auch zu einer Beantwortung per E-Mail berechtigt sind. Ansonsten bitten wir Sie, eine andere Art der Kommunikation (z.B. über den Postweg) in Betracht zu ziehen.</p>

    <h3>6. Rechtswirksamkeit dieses Haftungsausschlusses</h3>

    <p>Dieser Haftungsausschluss ist als Teil des Internetangebotes zu betrachten, von dem aus auf diese Seite verwiesen wurde. Sofern Teile oder einzelne Formulierungen dieses Textes der geltenden Rechtslage nicht, nicht mehr oder nicht vollständig entsprechen sollten, bleiben die übrigen Teile des Dokuments in ihrem Inhalt und ihrer Gültigkeit davon unberührt.</p>

    <h3>7. Dieses Impressum gilt auch für folgende Social-Media-Accounts:</h3>
    
    <p><a href="https://www.facebook.com/deutschestechnikmuseum" target="_blank">Facebook</a>, <a href="https://www.youtube.com/channel/UCp6HbGJW4PuVlje_b1xLcmQ" target="_blank">YouTube</a></p>
    <p>Die Nutzungsbedingungen für unsere Facebook-Fanpage finden Sie <a href="http://sdtb.de/stiftung/2126/" target="_blank">hier</a>.</p>
    <p class="mt-4">Stiftung Deutsches Technikmuseum Berlin<br>
        Trebbiner Straße 9<br>
        10963 Berlin
    </p>
</div>

@endsection