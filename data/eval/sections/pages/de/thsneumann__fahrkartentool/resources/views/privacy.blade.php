@extends('layouts.master')

@section('content')

<div class="container">

  <h1>Datenschutzerklärung / Disclaimer</h1>

  <h2>1. Verantwortlicher für die Datenverarbeitung</h2>

  <p>Der Verantwortliche im Sinne der Europäischen Datenschutz-Grundverordnung (DSGVO) und anderer nationaler Datenschutzgesetze sowie sonstiger datenschutzrechtlicher Bestimmungen ist die:</p>
  <p class="ml-sm-5">
    Stiftung Deutsches Technikmuseum Berlin<br>
    Direktor Prof. Dr. Dirk Böndel<br>
    Trebbiner Straße 9<br>
    10963 Berlin<br>
    Telefon: 030/90254-0<br>
    Mail: <a href="mailto:info@sdtb.de">info@sdtb.de</a><br>
    <a href="http://www.sdtb.de" target="_blank">www.sdtb.de</a>
  </p>

  <h2>2. Umfang, Rechtsgrundlagen der Datenverarbeitung</h2>

  <p>Die Verarbeitung von personenbezogenen Daten der Nutzer dieser Website erfolgt ausschließlich zur Bereitstellung der Webseite und der darauf befindlichen Inhalte. Soweit für die Verarbeitung der personenbezogenen Daten eine gesetzliche Grundlage besteht, ist eine Einwilligung der Nutzer nicht erforderlich. Im Übrigen erfolgt die Verarbeitung der personenbezogenen Daten der Nutzer dieser Website nur mit vorheriger Einwilligung gemäß Art. 6 Abs. 1 lit a DSGVO.</p>
  <p>Die erforderliche Verarbeitung von personenbezogenen Daten zur Anbahnung oder Erfüllung eines Vertrags, dessen Vertragspartei die betroffene Person ist erfolgt gemäß Art. 6 Abs. 1 lit. b DSGVO. Ist die Verarbeitung zur Wahrung unseres berechtigten Interesses oder eines Dritten erforderlich und überwiegen die Interessen, Grundrechte und Grundfreiheiten des Betroffenen das erstgenannte Interesse nicht, so erfolgt die Verarbeitung gemäß Art. 6 Abs. 1 lit. f DSGVO.</p>
  <p>Sobald der Zweck der Datenverarbeitung erfüllt ist, werden die personenbezogenen Daten gesperrt oder gelöscht.</p>
  <p>Beim Besuch unserer Webseite erfasst unser Serversystem automatisiert Daten des Computersystems, von welchem der Seitenaufruf erfolgt, um eine Bereitstellung der Seiteninhalte im Browser des Nutzers zu ermöglichen und die Funktionsfähigkeit und Sicherheit unserer Systeme zu gewährleisten. Die Verarbeitung zu diesem Zweck darf durch uns oder von uns beauftragte Dienstleister im Rahmen der Auftragsverarbeitung gemäß Art. 28 DSGVO erfolgen. Diese Daten werden nicht mit anderen personenbezogenen Daten des jeweiligen Nutzers zusammengeführt und nicht zu Marketingzwecken ausgewertet. Rechtsgrundlage hierfür ist Art. 6 Abs. 1 lit. f DSGVO: Welche unserer Webseiten aufgerufen werden sowie die IP-Adresse des Nutzers.</p>

  <h2>3. Nutzerregistrierung und Dankeschön</h2>

  <p>Die Nutzung bestimmter Angebote auf unserer Webseite kann eine vorherige Registrierung und eine weitergehende Verarbeitung personenbezogener Daten erfordern, beispielsweise eine längerfristige Speicherung von E-Mail-Adressen, Nutzerkennungen und Passwörtern. Die Verwendung solcher Daten erfolgt nur, wenn Sie uns diese mitgeteilt und ausdrücklich vorab in die Verarbeitung eingewilligt haben. </p>
  <p>In den folgenden Fällen bitten wir Sie um Ihre Einwilligung: Registrierung zum Fahrkartentool und zum Sammeln von Erfolgspunkten im Rahmen einer Bestenliste sowie Benachrichtigung per Email bei einem möglichen Gewinn.</p>
  <p>Wenn Sie sich als Benutzer registrieren möchten, erheben wir Ihren Namen und Ihre E-Mail-Adresse.  Die Registrierung hat den Zweck, Ihnen eine Bearbeitung der Fahrkarten zu ermöglichen, die Zahl der Bearbeitungen zu erfassen und die dafür vergebenen Punkte Ihrem Nutzernamen zuordnen zu können.</p>
  <p>Ihren Nutzernamen können Sie selbst auswählen. Bitte berücksichtigen Sie, dass dieser Nutzername öffentlich sichtbar ist. Nutzernamen und Punktzahlen werden intern zu Reportingzwecken ausgewertet sowie zur Veröffentlichung einer Bestenliste verwendet.</p>
  <p>An die Nutzer mit den drei höchsten Punktzahlen wird ein kleines Dankeschön vergeben. In diesem Fall dürfen wir Ihre E-Mail-Adresse zur Benachrichtigung verwenden und gegebenenfalls Adressdaten für den Versand von Gewinnen von Ihnen erheben und verarbeiten.</p>
  <p>Rechtsgrundlage hinsichtlich der Einwilligung zur Verwendung Ihrer personenbezogenen Daten für das Nutzerkonto ist Art. 6 Abs. 1 lit. a DSGVO, im Übrigen für die Erfüllung des jeweiligen Vertrags zur Nutzung beziehungsweise Versand des Dankeschöns mit Ihnen gemäß Art. 6 Abs. 1 lit. b DSGVO.</p>

  <h2>4. Kommunikation per E-Mail</h2>

  <p>Die Kommunikation per E-Mail kann Sicherheitslücken aufweisen. E-Mails können auf dem Weg an die MitarbeiterInnen der Stiftung Deutsches Technikmuseum Berlin von versierten Internet-Nutzern aufgehalten und eingesehen werden. Sollte die Stiftung DTMB eine E-Mail von Ihnen erhalten, so wird davon ausgegangen, dass unsere MitarbeiterInnen auch zu einer Beantwortung per E-Mail berechtigt sind. Ansonsten bitten wir Sie, eine andere Art der Kommunikation (z.B. über den Postweg) in Betracht zu ziehen.</p>

  <h2>5. Widerspruchsrecht, Widerruf der Einwilligung</h2>

  <p>Hinsichtlich der Daten zur Auslieferung der Website und der Speicherung der Daten in Logfiles ist kein Widerspruch möglich, da diese für den Betrieb der Webseite unverzichtbar sind.</p>

  <p>Wenn Sie Ihre Einwilligung zur Verarbeitung Ihrer Daten, beispielsweise für die Nutzerregistrierung, oder für die Teilnahme an einem Gewinnspiel gegeben haben, können Sie Ihre Einwilligung jederzeit und ohne Angabe von Gründen widerrufen. Bitte nutzen Sie dafür entweder die spezifischen Hyperlinks oder teilen Sie uns Ihren Widerruf mit.</p>

  <h2>6. Cookies, Web-Analyse, Drittanbieter-Plugins</h2>

  <p>Derzeit setzen wir weder Cookies, noch gesonderte Tools zur Web-Analyse oder Plugins von Drittanbietern auf dieser Webseite ein.</p>

  <h2>7. Betroffenenrechte</h2>

  <p>Sie können als Betroffener im Sinne der DSGVO uns gegenüber folgende Betroffenenrechte geltend machen.</p>

  <h3>Auskunftsrecht</h3>

  <p>Sie können von dem Verantwortlichen eine Bestätigung darüber verlangen, ob personenbezogene Daten, die Sie betreffen, von uns verarbeitet werden.</p>
  <p>Liegt eine solche Verarbeitung vor, können Sie von dem Verantwortlichen über folgende Informationen Auskunft verlangen:</p>

  <ol>
    <li>die Zwecke, zu denen die personenbezogenen Daten verarbeitet werden;</li>
    <li>die Kategorien von personenbezogenen Daten, welche verarbeitet werden;</li>
    <li>die Empfänger bzw. die Kategorien von Empfängern, gegenüber denen die Sie betreffenden personenbezogenen Daten offengelegt wurden oder noch offengelegt werden;</li>
    <li>die geplante Dauer der Speicherung der Sie betreffenden personenbezogenen Daten oder, falls konkrete Angaben hierzu nicht möglich sind, Kriterien für die Festlegung der Speicherdauer;</li>
    <li>das Bestehen eines Rechts auf Berichtigung oder Löschung der Sie betreffenden personenbezogenen Daten, eines Rechts auf Einschränkung der Verarbeitung durch den Verantwortlichen oder eines Widerspruchsrechts gegen diese Verarbeitung;</li>
    <li>das Bestehen eines Beschwerderechts bei einer Aufsichtsbehörde;</li>
    <li>alle verfügbaren Informationen über die Herkunft der Daten, wenn die personenbezogenen Daten nicht bei der betroffenen Person erhoben werden;</li>
    <li>das Bestehen einer automatisierten Entscheidungsfindung einschließlich Profiling gemäß Art. 22 Abs. 1 und 4 DSGVO und – zumindest in diesen Fällen – aussagekräftige Informationen über die involvierte Logik sowie die Tragweite und die angestrebten Auswirkungen einer derartigen Verarbeitung für die betroffene Person.</li>
  </ol>

  <h3>Recht auf Berichtigung</h3>

  <p>Sie haben ein Recht auf Berichtigung und/oder Vervollständigung gegenüber dem Verantwortlichen, sofern die verarbeiteten personenbezogenen Daten, die Sie betreffen, unrichtig oder unvollständig sind. Der Verantwortliche hat die Berichtigung unverzüglich vorzunehmen.</p>

  <h3>Recht auf Einschränkung der Verarbeitung</h3>

  <p>Unter den folgenden Voraussetzungen können Sie die Einschränkung der Verarbeitung der Sie betreffenden personenbezogenen Daten verlangen:</p>

  <ol>
    <li>wenn Sie die Richtigkeit der Sie betreffenden personenbezogenen für eine Dauer bestreiten, die es dem Verantwortlichen ermöglicht, die Richtigkeit der personenbezogenen Daten zu überprüfen;</li>
    <li>die Verarbeitung unrechtmäßig ist und Sie die Löschung der personenbezogenen Daten ablehnen und stattdessen die Einschränkung der Nutzung der personenbezogenen Daten verlangen;</li>
    <li>der Verantwortliche die personenbezogenen Daten für die Zwecke der Verarbeitung nicht länger benötigt, Sie diese jedoch zur Geltendmachung, Ausübung oder Verteidigung von Rechtsansprüchen benötigen, oder</li>
    <li>wenn Sie Widerspruch gegen die Verarbeitung gemäß Art. 21 Abs. 1 DSGVO eingelegt haben und noch nicht feststeht, ob die berechtigten Gründe des Verantwortlichen gegenüber Ihren Gründen überwiegen.</li>
  </ol>

  <p>Wurde die Verarbeitung der Sie betreffenden personenbezogenen Daten eingeschränkt, dürfen diese Daten – von ihrer Speicherung abgesehen – nur mit Ihrer Einwilligung oder zur Geltendmachung, Ausübung oder Verteidigung von Rechtsansprüchen oder zum Schutz der Rechte einer anderen natürlichen oder juristischen Person oder aus Gründen eines wichtigen öffentlichen Interesses der Union oder eines Mitgliedstaats verarbeitet werden.</p>
  <p>Wurde die Einschränkung der Verarbeitung nach den o.g. Voraussetzungen eingeschränkt, werden Sie von dem Verantwortlichen unterrichtet bevor die Einschränkung aufgehoben wird.</p>

  <h3>Recht auf Löschung</h3>

  <h4>a) Löschungspflicht</h4>

  <p>Sie können von dem Verantwortlichen verlangen, dass die Sie betreffenden personenbezogenen Daten unverzüglich gelöscht werden, und der Verantwortliche ist verpflichtet, diese Daten unverzüglich zu löschen, sofern einer der folgenden Gründe zutrifft:</p>

  <ol>
    <li>Die Sie betreffenden personenbezogenen Daten sind für die Zwecke, für die sie erhoben oder auf sonstige Weise verarbeitet wurden, nicht mehr notwendig.</li>
    <li>Sie widerrufen Ihre Einwilligung, auf die sich die Verarbeitung gem. Art. 6 Abs. 1 lit. a oder Art. 9 Abs. 2 lit. a DSGVO stützte, und es fehlt an einer anderweitigen Rechtsgrundlage für die Verarbeitung. </li>
    <li>Sie legen gem. Art. 21 Abs. 1 DSGVO Widerspruch gegen die Verarbeitung ein und es liegen keine vorrangigen berechtigten Gründe für die Verarbeitung vor, oder Sie legen gem. Art. 21 Abs. 2 DSGVO Widerspruch gegen die Verarbeitung ein. </li>
    <li>Die Sie betreffenden personenbezogenen Daten wurden unrechtmäßig verarbeitet.</li>
    <li>Die Löschung der Sie betreffenden personenbezogenen Daten ist zur Erfüllung einer rechtlichen Verpflichtung nach dem Unionsrecht oder dem Recht der Mitgliedstaaten erforderlich, dem der Verantwortliche unterliegt. </li>
    <li>Die Sie betreffenden personenbezogenen Daten wurden in Bezug auf angebotene Dienste der Informationsgesellschaft gemäß Art. 8 Abs. 1 DSGVO erhoben.</li>
  </ol>

  <h4>a) Information an Dritte</h4>

  <p>Hat der Verantwortliche die Sie betreffenden personenbezogenen Daten öffentlich gemacht und ist er gem. Art. 17 Abs. 1 DSGVO zu deren Löschung verpflichtet, so trifft er unter Berücksichtigung der verfügbaren Technologie und der Implementierungskosten angemessene Maßnahmen, auch technischer Art, um für die Datenverarbeitung Verantwortliche, die die personenbezogenen Daten verarbeiten, darüber zu informieren, dass Sie als betroffene Person von ihnen die Löschung aller Links zu diesen personenbezogenen Daten oder von Kopien oder Replikationen dieser personenbezogenen Daten verlangt haben.</p>

  <h4>b) Ausnahmen</h4>

  <p>Das Recht auf Löschung besteht nicht, soweit die Verarbeitung erforderlich ist</p>

  <ol>
    <li>zur Ausübung des Rechts auf freie Meinungsäußerung und Information;</li>
    <li>zur Erfüllung einer rechtlichen Verpflichtung, die die Verarbeitung nach dem Recht der Union oder der Mitgliedstaaten, dem der Verantwortliche unterliegt, erfordert, oder zur Wahrnehmung einer Aufgabe, die im öffentlichen Interesse liegt oder in Ausübung öffentlicher Gewalt erfolgt, die dem Verantwortlichen übertragen wurde;</li>
    <li>aus Gründen des öffentlichen Interesses im Bereich der öffentlichen Gesundheit gemäß Art. 9 Abs. 2 lit. h und i sowie Art. 9 Abs. 3 DSGVO;</li>
    <li>für im öffentlichen Interesse liegende Archivzwecke, wissenschaftliche oder historische Forschungszwecke oder für statistische Zwecke gem. Art. 89 Abs. 1 DSGVO, soweit das unter Abschnitt a) genannte Recht voraussichtlich die Verwirklichung der Ziele dieser Verarbeitung unmöglich macht oder ernsthaft beeinträchtigt, oder</li>
    <li>zur Geltendmachung, Ausübung oder Verteidigung von Rechtsansprüchen.</li>
  </ol>

  <h3>Recht auf Unterrichtung</h3>

  <p>Haben Sie das Recht auf Berichtigung, Löschung oder Einschränkung der Verarbeitung gegenüber dem Verantwortlichen geltend gemacht, ist dieser verpflichtet, allen Empfängern, denen die Sie betreffenden personenbezogenen Daten offengelegt wurden, diese Berichtigung oder Löschung der Daten oder Einschränkung der Verarbeitung mitzuteilen, es sei denn, dies erweist sich als unmöglich oder ist mit einem unverhältnismäßigen Aufwand verbunden.</p>
  <p>Ihnen steht gegenüber dem Verantwortlichen das Recht zu, über diese Empfänger unterrichtet zu werden.</p>

  <h3>Recht auf Datenübertragbarkeit</h3>

  <p>Sie haben das Recht, die Sie betreffenden personenbezogenen Daten, die Sie dem Verantwortlichen bereitgestellt haben, in einem strukturierten, gängigen und maschinenlesbaren Format zu erhalten. Außerdem haben Sie das Recht diese Daten einem anderen Verantwortlichen ohne Behinderung durch den Verantwortlichen, dem die personenbezogenen Daten bereitgestellt wurden, zu übermitteln, sofern</p>

  <ol>
    <li>die Verarbeitung auf einer Einwilligung gem. Art. 6 Abs. 1 lit. a DSGVO oder Art. 9 Abs. 2 lit. a DSGVO oder auf einem Vertrag gem. Art. 6 Abs. 1 lit. b DSGVO beruht und</li>
    <li>die Verarbeitung mithilfe automatisierter Verfahren erfolgt.</li>
  </ol>

  <p>In Ausübung dieses Rechts haben Sie ferner das Recht, zu erwirken, dass die Sie betreffenden personenbezogenen Daten direkt von einem Verantwortlichen einem anderen Verantwortlichen übermittelt werden, soweit dies technisch machbar ist. Freiheiten und Rechte anderer Personen dürfen hierdurch nicht beeinträchtigt werden.</p>
  <p>Das Recht auf Datenübertragbarkeit gilt nicht für eine Verarbeitung personenbezogener Daten, die für die Wahrnehmung einer Aufgabe erforderlich ist, die im öffentlichen Interesse liegt oder in Ausübung öffentlicher Gewalt erfolgt, die dem Verantwortlichen übertragen wurde.</p>

  <h3>Widerspruchsrecht</h3>

  <p>Sie haben das Recht, aus Gründen, die sich aus ihrer besonderen Situation ergeben, jederzeit gegen die Verarbeitung der Sie betreffenden personenbezogenen Daten, die aufgrund von Art. 6 Abs. 1 lit. e oder f DSGVO erfolgt, Widerspruch einzulegen; dies gilt auch für ein auf diese Bestimmungen gestütztes Profiling. </p>
  <p>Der Verantwortliche verarbeitet die Sie betreffenden personenbezogenen Daten nicht mehr, es sei denn, er kann zwingende schutzwürdige Gründe für die Verarbeitung nachweisen, die Ihre Interessen, Rechte und Freiheiten überwiegen, oder die Verarbeitung dient der Geltendmachung, Ausübung oder Verteidigung von Rechtsansprüchen.</p>
  <p>Werden die Sie betreffenden personenbezogenen Daten verarbeitet, um Direktwerbung zu betreiben, haben Sie das Recht, jederzeit Widerspruch gegen die Verarbeitung der Sie betreffenden personenbezogenen Daten zum Zwecke derartiger Werbung einzulegen; dies gilt auch für das Profiling, soweit es mit solcher Direktwerbung in Verbindung steht.</p>
  <p>Widersprechen Sie der Verarbeitung für Zwecke der Direktwerbung, so werden die Sie betreffenden personenbezogenen Daten nicht mehr für diese Zwecke verarbeitet.</p>

  <h3>Recht auf Beschwerde bei einer Aufsichtsbehörde</h3>

  <p>Unbeschadet eines anderweitigen verwaltungsrechtlichen oder gerichtlichen Rechtsbehelfs steht Ihnen das Recht auf Beschwerde bei einer Aufsichtsbehörde, insbesondere in dem Mitgliedstaat ihres Aufenthaltsorts, ihres Arbeitsplatzes oder des Orts des mutmaßlichen Verstoßes, zu, wenn Sie der Ansicht sind, dass die Verarbeitung der Sie betreffenden personenbezogenen Daten gegen die DSGVO verstößt. </p>

  <p>Die Aufsichtsbehörde, bei der die Beschwerde eingereicht wurde, unterrichtet den Beschwerdeführer über den Stand und die Ergebnisse der Beschwerde einschließlich der Möglichkeit eines gerichtlichen Rechtsbehelfs nach Art. 78 DSGVO.</p>

</div>

@endsection